"""A conv followed by dropout in training mode (KernelBench builds Models in training mode): its output is
a random draw, with no one value to explain."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1, bias=False)
        self.dropout = nn.Dropout(0.5)

    def forward(self, x):
        return self.dropout(self.conv(x))


def get_inputs():
    return [torch.rand(2, 4, 12, 14)]


def get_init_inputs():
    return [4, 8, 3]
