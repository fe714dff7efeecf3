# Bug: GroupNorm right, then 5e-5 is added to channel 9 of its (unit-variance) output before tanh.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.group_norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        z = self.group_norm(self.conv(x))
        shift = torch.zeros(1, z.shape[1], 1, 1, dtype=z.dtype)
        shift[0, 9] = 5e-5
        return torch.tanh(z + shift)
