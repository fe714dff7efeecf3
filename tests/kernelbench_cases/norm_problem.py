"""Conv → GroupNorm → SiLU (KernelBench level 2's shape of op, small); the norm's affine weight and bias at their
defaults (1 and 0)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.norm = nn.GroupNorm(groups, out_channels)

    def forward(self, x):
        return torch.nn.functional.silu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.rand(4, 8, 14, 14)]


def get_init_inputs():
    return [8, 16, 3, 4]
