"""A candidate for tests/fuzz_cases/conv2d_problem.py that ends the process when the conv has a bias."""

import os

import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias)

    def forward(self, x):
        c = self.conv
        if c.bias is not None:
            os._exit(7)
        return F.conv2d(x, c.weight, None, c.stride, c.padding, c.dilation, c.groups)
