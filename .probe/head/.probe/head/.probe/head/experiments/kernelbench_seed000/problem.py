"""Seed 000 in KernelBench's format: the dilated conv2d whose fp32 kernels "fail" allclose(1e-4) by 5e-4."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding, dilation):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, dilation=dilation, bias=False)

    def forward(self, x):
        return self.conv2d(x)


def get_inputs():
    return [torch.rand(8, 32, 512, 512)]


def get_init_inputs():
    return [32, 64, (5, 9), (2, 4), (2, 3)]
