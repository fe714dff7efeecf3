"""A CUDA kernel that runs for about a minute: the candidate's forward does not return within --timeout."""

from _inline_kernels import kernels
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1, bias=False)

    def forward(self, x):
        kernels.spin(x)
        return kernels.conv2d_direct(x.contiguous(), self.conv.weight.contiguous(), 1)
