# Bug: everything right, then output channel 3 is multiplied by (1 + 5e-5): a 5e-5 relative error on channel 3 only.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)

    def forward(self, x):
        y = torch.nn.functional.silu(self.conv(x))
        factor = torch.ones(1, y.shape[1], 1, 1, dtype=y.dtype)
        factor[0, 3] = 1.0 + 5e-5
        return y * factor
