"""A problem whose Model refuses every input channel count but its own, and ends the process on 2 channels."""

import sys

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        if in_channels == 2:
            sys.exit(5)
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        if x.shape[1] != 4:
            raise ValueError("this Model takes 4 channels only")
        return self.conv(x)


def get_inputs():
    return [torch.rand(1, 4, 9, 9)]


def get_init_inputs():
    return [4, 4, 3]
