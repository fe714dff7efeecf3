"""Right on every configuration but the problem's own (a 9×9 input to 4→4 channels), where it adds 1e-3: a search
that only draws configurations would pass it."""

import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias)

    def forward(self, x):
        c = self.conv
        out = F.conv2d(x, c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups)
        if tuple(x.shape) == (1, 4, 9, 9) and c.in_channels == c.out_channels == 4:
            out = out + 1e-3
        return out
