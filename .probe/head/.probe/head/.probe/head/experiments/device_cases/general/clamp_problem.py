"""Conv3d → LeakyReLU → clamp in KernelBench's format."""

import torch
import torch.nn.functional as F
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, slope, low, high):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.slope, self.low, self.high = slope, low, high

    def forward(self, x):
        return torch.clamp(F.leaky_relu(self.conv(x), self.slope), self.low, self.high)


def get_inputs():
    return [torch.rand(4, 32, 16, 24, 24)]


def get_init_inputs():
    return [32, 32, 3, 0.05, -0.2, 0.2]
