"""The conv every candidate here starts from: the same module, built with the same random draws as Model's."""

import torch.nn.functional as F
from torch import nn


class Conv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1, bias=False)

    def forward(self, x):
        c = self.conv
        return F.conv2d(x, c.weight, None, c.stride, c.padding)
