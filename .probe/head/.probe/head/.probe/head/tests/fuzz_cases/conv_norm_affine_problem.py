"""Conv2d → GroupNorm(num_groups) → × a (C,1,1) scale parameter → + a (C,1,1) bias parameter → clamp."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups, scale_shape, bias_shape, min_value,
                 max_value):  # fmt: skip
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.norm = nn.GroupNorm(num_groups, out_channels)
        self.scale = nn.Parameter(torch.randn(scale_shape))
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.min_value, self.max_value = min_value, max_value

    def forward(self, x):
        y = self.norm(self.conv(x)) * self.scale + self.bias
        return torch.clamp(y, self.min_value, self.max_value)


def get_inputs():
    return [torch.rand(32, 3, 64, 64)]


def get_init_inputs():
    return [3, 16, 3, 8, (16, 1, 1), (16, 1, 1), -1.0, 1.0]
