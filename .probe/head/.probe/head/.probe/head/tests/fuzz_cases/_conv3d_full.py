"""Shared by the full Conv3d candidates: the problem's module, built with the same draws."""

from torch import nn


class FullConv3d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, groups=1, bias=True):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, groups=groups,
                              bias=bias)  # fmt: skip
