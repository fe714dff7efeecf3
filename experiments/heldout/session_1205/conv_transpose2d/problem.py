import torch
import torch.nn as nn


class Model(nn.Module):
    """Transposed 2-D convolution, stride 2."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv_transpose2d = nn.ConvTranspose2d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding
        )

    def forward(self, x):
        return self.conv_transpose2d(x)


batch_size = 8
in_channels = 32
out_channels = 16
height = 32
width = 32


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, 4, 2, 1]
