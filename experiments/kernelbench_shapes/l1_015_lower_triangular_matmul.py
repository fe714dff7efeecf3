"""KernelBench level1/15_Matmul_for_lower_triangular_matrices.py's shape: tril(A @ B), A, B tril of 4096² rand."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.tril(torch.matmul(A, B))


M = 4096


def get_inputs():
    A = torch.rand(M, M)
    B = torch.rand(M, M)
    return [torch.tril(A), torch.tril(B)]


def get_init_inputs():
    return []
