# Reference: Conv2d (8→16, 3×3), GroupNorm with one group per channel (16 groups, default affine), SiLU, fp32.
import torch
from torch import nn

batch_size = 2
in_channels = 8
out_channels = 16
height = width = 18
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.norm = nn.GroupNorm(out_channels, out_channels)

    def forward(self, x):
        return torch.nn.functional.silu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
