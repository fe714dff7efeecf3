"""The conv in plain fp32, then bias + ReLU in a kernel that reads channel 4's bias for channel 3 (a slip)."""

import torch
import torch.nn.functional as F
from _general_kernels import precise
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1, bias=False)
        self.bias = nn.Parameter(torch.randn(out_channels) * 0.1)
        self.kernels = precise()

    def forward(self, x):
        with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
            y = F.conv2d(x, self.conv.weight, padding=1)
        return self.kernels.bias_relu_slip(y, self.bias)
