"""KernelBench level1/13_Matmul_for_symmetric_matrices.py's shape: A @ B, each (R + Rᵀ)/2 of a 4096² torch.rand."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


N = 4096


def _symmetric(n):
    r = torch.rand(n, n)
    return (r + r.T) / 2


def get_inputs():
    A = _symmetric(N)
    B = _symmetric(N)
    return [A, B]


def get_init_inputs():
    return []
