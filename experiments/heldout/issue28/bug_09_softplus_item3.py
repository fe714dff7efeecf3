# Bug: batch item 3's pre-activation is shifted by 1e-4 × the conv output's std before softplus.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, subtract_value):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.subtract_value = subtract_value

    def forward(self, x):
        z = self.conv(x)
        shift = torch.zeros(z.shape[0], 1, 1, 1, dtype=z.dtype)
        shift[3] = 1e-4
        return torch.nn.functional.softplus(z - self.subtract_value + shift * z.std())
