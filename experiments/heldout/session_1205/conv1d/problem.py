import torch
import torch.nn as nn


class Model(nn.Module):
    """Standard 1-D convolution."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, padding: int = 0):
        super().__init__()
        self.conv1d = nn.Conv1d(in_channels, out_channels, kernel_size, padding=padding)

    def forward(self, x):
        return self.conv1d(x)


batch_size = 16
in_channels = 32
out_channels = 64
kernel_size = 5
length = 2048


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, 2]
