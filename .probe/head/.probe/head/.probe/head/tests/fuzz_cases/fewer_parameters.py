"""Correct, with a constructor that takes only what get_init_inputs() gives (as KernelBench calls it): no groups
or bias parameters, which the problem's Model has with defaults."""

import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, dilation)

    def forward(self, x):
        c = self.conv
        return F.conv2d(x.double(), c.weight.double(), c.bias.double(), c.stride, c.padding, c.dilation).float()
