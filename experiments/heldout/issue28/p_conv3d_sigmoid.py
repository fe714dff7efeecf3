# Reference: Conv3d (4→8, 3×3×3, padding 1) then sigmoid, fp32.
import torch
from torch import nn

batch_size = 2
in_channels = 4
out_channels = 8
depth, height, width = 8, 12, 12
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=1)

    def forward(self, x):
        return torch.sigmoid(self.conv(x))


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
