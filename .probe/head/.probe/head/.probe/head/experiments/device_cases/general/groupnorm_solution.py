"""The conv in plain fp32, then GroupNorm and tanh fused in one kernel built with --use_fast_math."""

import torch
import torch.nn.functional as F
from _general_kernels import fast
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.norm = nn.GroupNorm(groups, out_channels)
        self.kernels = fast()

    def forward(self, x):
        with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
            y = F.conv2d(x, self.conv.weight, self.conv.bias)
        n = self.norm
        return self.kernels.groupnorm_tanh(y, n.weight, n.bias, n.num_groups, n.eps)
