import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d, GroupNorm, tanh."""

    def __init__(self, in_channels, out_channels, kernel_size, groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.group_norm = nn.GroupNorm(groups, out_channels)

    def forward(self, x):
        return torch.tanh(self.group_norm(self.conv(x)))


batch_size = 8
in_channels = 8
out_channels = 32
height = width = 64


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, 3, 8]
