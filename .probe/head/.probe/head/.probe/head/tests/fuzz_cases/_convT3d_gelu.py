"""Shared by the ConvTranspose3d → scale → GELU candidates: the problem's module, built with the same draws."""

from torch import nn


class TransposedGelu(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, scaling_factor):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding
        )
        self.scaling_factor = scaling_factor
