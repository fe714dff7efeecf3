"""A general conv2d problem whose constructor takes every parameter (for fpa fuzz)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(1, 4, 9, 9)]


def get_init_inputs():
    return [4, 4, 3, 1, 0, (1, 1)]  # dilation as a tuple: drawn per axis (a tuple keeps its length)
