"""Conv2d without bias, a bias parameter added, ReLU, in KernelBench's format."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1, bias=False)
        self.bias = nn.Parameter(torch.randn(out_channels) * 0.1)

    def forward(self, x):
        return torch.relu(self.conv(x) + self.bias.view(1, -1, 1, 1))


def get_inputs():
    return [torch.rand(8, 16, 64, 64)]


def get_init_inputs():
    return [16, 32, 3]
