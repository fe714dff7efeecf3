# Correct: the per-channel multiplier (same draw) folded into the Conv3d weight and bias at init; fp32-equal.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, multiplier_shape):
        super().__init__()
        conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        multiplier = torch.randn(multiplier_shape)
        with torch.no_grad():
            m = multiplier.reshape(-1)
            self.weight = nn.Parameter(conv.weight * m.reshape(-1, 1, 1, 1, 1))
            self.bias = nn.Parameter(conv.bias * m)

    def forward(self, x):
        return torch.sigmoid(torch.nn.functional.conv3d(x, self.weight, self.bias))
