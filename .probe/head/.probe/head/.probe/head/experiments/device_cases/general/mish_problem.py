"""Conv2d → Mish in KernelBench's format (K = 32·3·3 = 288: cuDNN's TF32 default shows)."""

import torch
import torch.nn.functional as F
from torch import nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)

    def forward(self, x):
        return F.mish(self.conv(x))


def get_inputs():
    return [torch.rand(8, 32, 64, 64)]


def get_init_inputs():
    return [32, 64, 3]
