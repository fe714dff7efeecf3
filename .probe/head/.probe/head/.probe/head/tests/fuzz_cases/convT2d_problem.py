"""ConvTranspose2d with stride, padding, output_padding, groups and bias as constructor arguments."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=2, padding=1, output_padding=1, groups=1,
                 bias=True):  # fmt: skip
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(
            in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias
        )

    def forward(self, x):
        return self.conv_transpose(x)


def get_inputs():
    return [torch.rand(4, 8, 32, 32)]


def get_init_inputs():
    return [8, 16, 3]
