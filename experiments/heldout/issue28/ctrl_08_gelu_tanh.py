# Correct up to GELU's form: conv and GroupNorm as the reference, GELU in its tanh form where it uses erf.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        y = self.norm(self.conv(x))
        return 0.5 * y * (1.0 + torch.tanh(0.7978845608028654 * (y + 0.044715 * y * y * y)))
