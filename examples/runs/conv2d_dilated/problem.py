"""A dilated Conv2d (the README's seed story, scaled down): cuDNN would run it in TF32 on a GPU."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding, dilation):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, dilation=dilation, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(2, 8, 12, 20)]


def get_init_inputs():
    return [8, 16, (3, 5), (2, 4), (2, 2)]
