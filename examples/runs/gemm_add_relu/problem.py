"""Linear (no bias) → + a bias parameter → ReLU (KernelBench level 2's Gemm_Add_ReLU, small)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return torch.relu(self.gemm(x) + self.bias)


def get_inputs():
    return [torch.randn(32, 128)]


def get_init_inputs():
    return [128, 48, (48,)]
