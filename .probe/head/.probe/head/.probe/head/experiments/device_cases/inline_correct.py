"""A correct fp32 CUDA kernel built with load_inline (whose build prints ninja's lines to stdout)."""

from _inline_kernels import kernels
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1, bias=False)

    def forward(self, x):
        return kernels.conv2d_direct(x.contiguous(), self.conv.weight.contiguous(), 1)
