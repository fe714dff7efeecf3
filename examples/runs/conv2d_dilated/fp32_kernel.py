"""A hand-written fp32 kernel: im2col (unfold) and one fp32 product per output. Right; against a TF32 reference
it fails the check all the same."""

import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding, dilation):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, dilation=dilation, bias=False)

    def forward(self, x):
        c = self.conv
        n, _, h, w = x.shape
        cols = F.unfold(x, c.kernel_size, dilation=c.dilation, padding=c.padding)  # (n, C·kh·kw, h·w)
        out = c.weight.flatten(1) @ cols  # (n, out_channels, h·w)
        return out.view(n, -1, h, w)
