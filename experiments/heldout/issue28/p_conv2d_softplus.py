# Reference: Conv2d (8→16, 3×3, no padding), subtract 5.0, softplus, fp32.
import torch
from torch import nn

batch_size = 4
in_channels = 8
out_channels = 16
height = width = 26
kernel_size = 3
subtract_value = 5.0


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, subtract_value):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.subtract_value = subtract_value

    def forward(self, x):
        return torch.nn.functional.softplus(self.conv(x) - self.subtract_value)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, subtract_value]
