# Bug: returns NHWC, (4, 24, 24, 16) instead of NCHW (4, 16, 24, 24); the values are right.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)

    def forward(self, x):
        return torch.nn.functional.silu(self.conv(x)).permute(0, 2, 3, 1).contiguous()
