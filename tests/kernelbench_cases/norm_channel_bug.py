"""Right everywhere but in channel 5, which is 5e-5 too large (relative): a bug smaller than the check's tolerance,
under a norm and a SiLU."""

import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.norm = nn.GroupNorm(groups, out_channels)

    def forward(self, x):
        y = torch.nn.functional.silu(self.norm(self.conv(x)))
        y[:, 5] *= 1 + 5e-5
        return y
