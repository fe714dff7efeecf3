"""ConvTranspose3d with output_padding, then scaling by a float and GELU (erf)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, scaling_factor):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding
        )
        self.scaling_factor = scaling_factor

    def forward(self, x):
        return torch.nn.functional.gelu(self.conv_transpose(x) * self.scaling_factor)


def get_inputs():
    return [torch.rand(16, 32, 16, 32, 32)]


def get_init_inputs():
    return [32, 16, 3, 2, 1, 1, 0.5]
