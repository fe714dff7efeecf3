# Reference: Conv2d (16→32, 3×3, padding 1), GroupNorm (8 groups), exact (erf) GELU, fp32.
import torch
from torch import nn

batch_size = 2
in_channels = 16
out_channels = 32
height = width = 20
kernel_size = 3
num_groups = 8


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        return torch.nn.functional.gelu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_groups]
