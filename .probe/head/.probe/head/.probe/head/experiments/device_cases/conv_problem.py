"""A conv2d in KernelBench's format, large enough that cuDNN's TF32 default shows (K = 32·3·3 = 288)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(4, 32, 128, 128)]


def get_init_inputs():
    return [32, 64, 3]
