"""A full Conv3d: an int kernel_size becomes a k×k×k kernel; groups and bias as arguments."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, groups=1, bias=True):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, groups=groups,
                              bias=bias)  # fmt: skip

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(8, 4, 16, 16, 16)]


def get_init_inputs():
    return [4, 8, 3]
