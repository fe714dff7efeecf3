"""Argmax over dim 1 of (16, 256, 256) in KernelBench's format: int64 indices."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.argmax(x, dim=self.dim)


def get_inputs():
    return [torch.randn(16, 256, 256)]


def get_init_inputs():
    return [1]
