"""A ConvTranspose3d followed by GroupNorm and GELU, in KernelBench's format (small: runs on a CPU in seconds)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, output_padding, num_groups):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, output_padding=output_padding
        )
        self.norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        return torch.nn.functional.gelu(self.norm(self.conv_transpose(x)))


def get_inputs():
    return [torch.rand(4, 16, 6, 8, 8)]


def get_init_inputs():
    return [16, 32, 3, 2, 1, 4]
