"""A problem whose get_inputs gives 3 channels to a conv that takes 4: its own Model fails on them."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(2, 3, 12, 14)]


def get_init_inputs():
    return [4, 8, 3]
