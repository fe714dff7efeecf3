"""A correct fp32 kernel with another summation order: input channels summed in two halves, then added."""

import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding, dilation):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, dilation=dilation, bias=False)

    def forward(self, x):
        c, h = self.conv, x.shape[1] // 2
        second = F.conv2d(x[:, h:], c.weight[:, h:], None, c.stride, c.padding, c.dilation)
        first = F.conv2d(x[:, :h], c.weight[:, :h], None, c.stride, c.padding, c.dilation)
        return second + first
