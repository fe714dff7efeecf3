"""KernelBench level1/14_Matmul_for_upper_triangular_matrices.py's shape: triu(A @ B), A, B triu of 4096² rand."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.triu(torch.matmul(A, B))


N = 4096


def get_inputs():
    A = torch.triu(torch.rand(N, N))
    B = torch.triu(torch.rand(N, N))
    return [A, B]


def get_init_inputs():
    return []
