# Bug: everything right, then output channel 5 is multiplied by (1 + 1e-4).
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=1)

    def forward(self, x):
        y = torch.sigmoid(self.conv(x))
        factor = torch.ones(1, y.shape[1], 1, 1, 1, dtype=y.dtype)
        factor[0, 5] = 1.0 + 1e-4
        return y * factor
