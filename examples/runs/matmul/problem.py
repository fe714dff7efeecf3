"""A plain matrix product with a long inner dimension."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(64, 2048), torch.randn(2048, 32)]


def get_init_inputs():
    return []
