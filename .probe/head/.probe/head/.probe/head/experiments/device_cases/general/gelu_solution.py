"""The transposed conv in plain fp32, then GELU's tanh approximation in a CUDA kernel (a common substitution)."""

import torch
from _general_kernels import precise
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding):
        super().__init__()
        self.conv = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding
        )
        self.kernels = precise()

    def forward(self, x):
        with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
            y = self.conv(x)
        return self.kernels.gelu_tanh(y)
