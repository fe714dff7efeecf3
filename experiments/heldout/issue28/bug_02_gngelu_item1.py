# Bug: everything right, then 3e-5 × the output's std is added to every output of batch item 1.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        y = torch.nn.functional.gelu(self.norm(self.conv(x)))
        shift = torch.zeros(y.shape[0], 1, 1, 1, dtype=y.dtype)
        shift[1] = 3e-5
        return y + shift * y.std()
