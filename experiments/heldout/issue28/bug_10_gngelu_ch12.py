# Bug: everything right, then output channel 12 is multiplied by (1 + 3e-5).
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        y = torch.nn.functional.gelu(self.norm(self.conv(x)))
        factor = torch.ones(1, y.shape[1], 1, 1, dtype=y.dtype)
        factor[0, 12] = 1.0 + 3e-5
        return y * factor
