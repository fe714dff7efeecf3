"""ConvTranspose3d → GELU (exact, erf) in KernelBench's format."""

import torch
import torch.nn.functional as F
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding):
        super().__init__()
        self.conv = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding
        )

    def forward(self, x):
        return F.gelu(self.conv(x))


def get_inputs():
    return [torch.rand(4, 32, 12, 12, 12)]


def get_init_inputs():
    return [32, 16, 3, 2, 1, 1]
