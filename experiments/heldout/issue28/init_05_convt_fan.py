# Wrong parameters: ConvTranspose2d weight drawn as (out, in, k, k) with fan_in in·k² = 256 (not 128), permuted.
import math

import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        w = torch.empty(out_channels, in_channels, kernel_size, kernel_size)
        nn.init.kaiming_uniform_(w, a=math.sqrt(5))
        self.weight = nn.Parameter(w.permute(1, 0, 2, 3).contiguous())
        bound = 1.0 / math.sqrt(in_channels * kernel_size * kernel_size)
        self.bias = nn.Parameter(torch.empty(out_channels).uniform_(-bound, bound))
        self.stride, self.padding = stride, padding

    def forward(self, x):
        y = torch.nn.functional.conv_transpose2d(x, self.weight, self.bias, stride=self.stride, padding=self.padding)
        return torch.nn.functional.mish(y)
