"""ConvTranspose2d (stride 2) → LeakyReLU in KernelBench's format."""

import torch
import torch.nn.functional as F
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, slope):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.slope = slope

    def forward(self, x):
        return F.leaky_relu(self.conv(x), self.slope)


def get_inputs():
    return [torch.rand(8, 64, 32, 32)]


def get_init_inputs():
    return [64, 32, 4, 2, 1, 0.1]
