# Bug: the last time step is cut off, (8, 32, 127) instead of (8, 32, 128).
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x):
        return torch.tanh(self.conv(x))[..., :-1]
