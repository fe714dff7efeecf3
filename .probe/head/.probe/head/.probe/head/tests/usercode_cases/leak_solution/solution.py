"""A buggy solution whose own helper module of the same name scales by 2: it must get its own ``common``,
not the problem's (which would make it pass)."""

import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1, bias=False)

    def forward(self, x):
        from common import output_scale  # imported when it runs, as lazy kernels do

        c = self.conv
        return F.conv2d(x, c.weight, None, c.stride, c.padding) * output_scale()
