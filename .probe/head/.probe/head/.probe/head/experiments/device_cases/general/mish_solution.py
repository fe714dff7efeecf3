"""The conv in plain fp32 (cuDNN with TF32 off, within forward only), Mish in a CUDA kernel (log1pf, expf, tanhf)."""

import torch
import torch.nn.functional as F
from _general_kernels import precise
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.kernels = precise()

    def forward(self, x):
        with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
            y = F.conv2d(x, self.conv.weight, self.conv.bias, padding=1)
        return self.kernels.mish(y)
