"""A kernel whose input-channel loop is unrolled by 4 and has no tail: the last in_channels % 4 channels are never
read. Right at the problem's own configuration (8 channels); wrong for any channel count that is not a multiple of 4.
"""

import torch.nn.functional as F
from torch import nn

UNROLL = 4


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=1):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding)

    def forward(self, x):
        c = self.conv
        read = x.shape[1] // UNROLL * UNROLL  # the channels the unrolled loop covers
        x = x.clone()
        x[:, read:] = 0.0
        return F.conv2d(x, c.weight, c.bias, c.stride, c.padding)
