"""Cumulative sum along dim 1 of (128, 4000) in KernelBench's format."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumsum(x, dim=self.dim)


def get_inputs():
    return [torch.rand(128, 4000)]


def get_init_inputs():
    return [1]
