# Bug: the top padding replicates row 0 instead of zeros, so the first two output rows are wrong.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=0)

    def forward(self, x):
        top = x[:, :, :1, :].expand(-1, -1, 2, -1)
        xp = torch.cat([top, x], dim=2)
        xp = torch.nn.functional.pad(xp, (2, 2, 0, 2))
        return torch.nn.functional.gelu(self.conv(xp))
