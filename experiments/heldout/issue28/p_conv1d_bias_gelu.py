# Reference: Conv1d (8→16, kernel 3), plus an extra learnable bias (16,1), exact GELU, fp32.
import torch
from torch import nn

batch_size = 8
in_channels = 8
out_channels = 16
length = 64
kernel_size = 3
bias_shape = (out_channels, 1)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, x):
        return torch.nn.functional.gelu(self.conv(x) + self.bias)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape]
