"""Linear → GELU (exact, erf form): KernelBench level 2's shape of op, small."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.nn.functional.gelu(self.linear(x))


def get_inputs():
    return [torch.randn(32, 256)]


def get_init_inputs():
    return [256, 64]
