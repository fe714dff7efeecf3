"""A wider conv2d problem (more outputs than explain samples) for locating a bug by channel."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(2, 16, 40, 40)]


def get_init_inputs():
    return [16, 16, 3]
