"""torch's conv3d as the reference runs it (cuDNN, TF32 default on), then LeakyReLU and clamp in one kernel."""

import torch.nn.functional as F
from _general_kernels import precise
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, slope, low, high):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.slope, self.low, self.high = slope, low, high
        self.kernels = precise()

    def forward(self, x):
        y = F.conv3d(x, self.conv.weight, self.conv.bias)
        return self.kernels.leaky_clamp(y, self.slope, self.low, self.high)
