"""A CUDA kernel that writes far outside its output: an illegal memory access in the candidate's process."""

from _inline_kernels import kernels
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1, bias=False)

    def forward(self, x):
        return kernels.conv2d_out_of_bounds(x.contiguous(), self.conv.weight.contiguous(), 1)
