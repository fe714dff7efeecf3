"""A conv called through a name imported from torch.nn.functional (not F.conv2d), as some problems do."""

import torch
from torch import nn
from torch.nn.functional import conv2d


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1, bias=False)

    def forward(self, x):
        return conv2d(x, self.conv.weight, None, 1, 1)


def get_inputs():
    return [torch.rand(2, 32, 12, 14)]


def get_init_inputs():
    return [32, 8, 3]
