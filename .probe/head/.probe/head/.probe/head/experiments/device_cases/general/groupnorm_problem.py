"""Conv2d → GroupNorm → tanh in KernelBench's format."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.norm = nn.GroupNorm(groups, out_channels)

    def forward(self, x):
        return torch.tanh(self.norm(self.conv(x)))


def get_inputs():
    return [torch.rand(8, 32, 48, 48)]


def get_init_inputs():
    return [32, 64, 3, 8]
