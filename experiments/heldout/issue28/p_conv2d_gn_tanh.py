# Reference: Conv2d (8→16, 3×3, padding 1), GroupNorm (4 groups, default affine), tanh, fp32.
import torch
from torch import nn

batch_size = 4
in_channels = 8
out_channels = 16
height = width = 16
kernel_size = 3
num_groups = 4


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.group_norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        return torch.tanh(self.group_norm(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_groups]
