"""KernelBench level 2 problem 54's shape of op, small: conv → × multiplier → LeakyReLU → GELU."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, multiplier_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.multiplier = nn.Parameter(torch.randn(multiplier_shape))
        self.leaky_relu = nn.LeakyReLU()

    def forward(self, x):
        x = self.conv(x)
        x = x * self.multiplier
        x = self.leaky_relu(x)
        return torch.nn.functional.gelu(x)


def get_inputs():
    return [torch.rand(2, 8, 17, 19)]


def get_init_inputs():
    return [8, 6, 3, (6, 1, 1)]
