"""GELU (exact, erf) of (64, 16384) standard-normal values in KernelBench's format."""

import torch
import torch.nn.functional as F
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        return F.gelu(x)


def get_inputs():
    return [torch.randn(64, 16384)]


def get_init_inputs():
    return []
