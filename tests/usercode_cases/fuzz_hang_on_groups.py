"""A candidate for tests/fuzz_cases/conv2d_problem.py that is right, except that it never returns when groups > 1."""

import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias)

    def forward(self, x):
        c = self.conv
        while c.groups > 1:
            pass
        return F.conv2d(x, c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups)
