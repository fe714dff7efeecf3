"""A Conv2d with bias; stride and padding as constructor arguments (fpa fuzz draws them, and the channel counts)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=1):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(2, 8, 16, 16)]


def get_init_inputs():
    return [8, 16, 3]
