"""Sum over the last dim of (128, 8192), dims kept, in KernelBench's format."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.rand(128, 8192)]


def get_init_inputs():
    return [1]
