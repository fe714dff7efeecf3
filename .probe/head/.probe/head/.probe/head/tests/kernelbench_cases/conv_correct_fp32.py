"""A correct fp32 kernel: the conv summed in fp64 and rounded once (more accurate than any fp32 order)."""

import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding, dilation):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, dilation=dilation, bias=False)

    def forward(self, x):
        c = self.conv
        return F.conv2d(x.double(), c.weight.double(), None, c.stride, c.padding, c.dilation).float()
