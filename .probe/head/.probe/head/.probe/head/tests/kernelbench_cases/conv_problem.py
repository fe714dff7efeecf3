"""A small dilated conv2d in KernelBench's problem format (the seed-000 shape, scaled down)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding, dilation):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, dilation=dilation, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(2, 16, 21, 30)]


def get_init_inputs():
    return [16, 8, (5, 9), (2, 4), (2, 3)]
