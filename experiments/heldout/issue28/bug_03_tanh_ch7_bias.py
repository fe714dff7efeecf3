# Bug: channel 7's pre-activation is shifted by 1e-4 × the conv output's std before tanh (a wrong bias term).
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x):
        z = self.conv(x)
        shift = torch.zeros(1, z.shape[1], 1, dtype=z.dtype)
        shift[0, 7] = 1e-4
        return torch.tanh(z + shift * z.std())
