"""A small conv2d problem in KernelBench's format, for the user-code failure cases beside it."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(2, 4, 12, 14)]


def get_init_inputs():
    return [4, 8, 3]
