# Reference: Conv2d (8→16, 3×3), multiply by a scalar scale_factor, tanh, fp32.
import torch
from torch import nn

batch_size = 4
in_channels = 8
out_channels = 16
height = width = 18
kernel_size = 3
scale_factor = 0.7


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, scale_factor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        return torch.tanh(self.conv(x) * self.scale_factor)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scale_factor]
