"""A candidate for tests/fuzz_cases/conv2d_problem.py that is wrong on its third call only (nondeterministic)."""

import torch.nn.functional as F
from torch import nn

calls = [0]


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias)

    def forward(self, x):
        c = self.conv
        calls[0] += 1
        y = F.conv2d(x, c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups)
        return y + 1 if calls[0] == 3 else y
