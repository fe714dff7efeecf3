"""A tiled kernel that supports only widths that are a multiple of its 16-wide tile: it raises on the problem's
input (width 20)."""

import torch.nn.functional as F
from torch import nn

TILE = 16


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding, dilation):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, dilation=dilation, bias=False)

    def forward(self, x):
        if x.shape[-1] % TILE:
            raise RuntimeError(f"conv2d_tiled: width {x.shape[-1]} is not a multiple of the tile ({TILE})")
        c = self.conv
        return F.conv2d(x, c.weight, None, c.stride, c.padding, c.dilation)
