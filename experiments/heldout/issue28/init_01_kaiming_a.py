# Wrong parameters: weight drawn with kaiming_uniform_(a=2.236), not a=√5: same draws, every weight ×1.0000253.
import math

import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_channels, in_channels, kernel_size, kernel_size))
        self.bias = nn.Parameter(torch.empty(out_channels))
        nn.init.kaiming_uniform_(self.weight, a=2.236)
        bound = 1.0 / math.sqrt(in_channels * kernel_size * kernel_size)
        nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        return torch.nn.functional.silu(torch.nn.functional.conv2d(x, self.weight, self.bias, padding=1))
