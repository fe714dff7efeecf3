"""A correct kernel whose weight is drawn with kaiming_uniform_(a=2.236) where PyTorch uses a=√5: every weight
×1.0000253. Under a TF32 reference it fails the check by the reference's TF32 as much as by its weights."""

import math

from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding, dilation):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, dilation=dilation, bias=False)
        self.conv.weight.data.mul_(math.sqrt((1 + 5.0) / (1 + 2.236**2)))  # the bound of a=2.236 over a=√5's

    def forward(self, x):
        return self.conv(x)
