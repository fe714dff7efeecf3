# Reference: Conv1d (16→32, kernel 5, padding 2) then tanh, fp32.
import torch
from torch import nn

batch_size = 8
in_channels = 16
out_channels = 32
length = 128
kernel_size = 5


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x):
        return torch.tanh(self.conv(x))


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
