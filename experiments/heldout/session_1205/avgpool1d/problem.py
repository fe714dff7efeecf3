import torch
import torch.nn as nn


class Model(nn.Module):
    """1-D average pooling (padding counted)."""

    def __init__(self, kernel_size: int, stride: int = 1, padding: int = 0):
        super().__init__()
        self.avg_pool = nn.AvgPool1d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.avg_pool(x)


batch_size = 64
in_channels = 32
input_length = 4096
kernel_size = 8
stride = 4
padding = 2


def get_inputs():
    return [torch.randn(batch_size, in_channels, input_length)]


def get_init_inputs():
    return [kernel_size, stride, padding]
