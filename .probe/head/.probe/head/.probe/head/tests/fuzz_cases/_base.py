"""Shared by the fuzz candidates: the same conv module, built with the same random draws as Model's."""

from torch import nn


class Base(nn.Module):
    def __init__(
        self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True, dims=2
    ):
        super().__init__()
        cls = nn.Conv2d if dims == 2 else nn.Conv3d
        self.conv = cls(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias)

    def parts(self):
        c = self.conv
        return c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups
