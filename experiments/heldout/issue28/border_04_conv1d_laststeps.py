# Bug: an off-by-one bound (idx < L-1) drops the last input position: the last 3 time steps are wrong.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x):
        keep = torch.ones(x.shape[-1], dtype=x.dtype)
        keep[-1] = 0.0
        return torch.tanh(self.conv(x * keep))
