# Reference: Conv3d (4→8, 3×3×3), multiply by a learnable per-channel multiplier (8,1,1,1), sigmoid, fp32.
import torch
from torch import nn

batch_size = 2
in_channels = 4
out_channels = 8
depth, height, width = 8, 10, 10
kernel_size = 3
multiplier_shape = (out_channels, 1, 1, 1)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, multiplier_shape):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.multiplier = nn.Parameter(torch.randn(multiplier_shape))

    def forward(self, x):
        return torch.sigmoid(self.conv(x) * self.multiplier)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, multiplier_shape]
