"""Seed-001 form: an int kernel_size becomes a (k, k, 1) Conv3d kernel; stride and padding ints apply to all dims."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=False):
        super().__init__()
        self.conv3d = nn.Conv3d(
            in_channels, out_channels, (kernel_size, kernel_size, 1), stride, padding, dilation, groups, bias
        )

    def forward(self, x):
        return self.conv3d(x)


def get_inputs():
    return [torch.rand(16, 3, 64, 64, 16)]


def get_init_inputs():
    return [3, 64, 3]
