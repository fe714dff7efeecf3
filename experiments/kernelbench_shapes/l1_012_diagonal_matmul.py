"""KernelBench level1/12_Matmul_with_diagonal_matrices_.py's shape: diag(A) @ B, A (4096,), B (4096, 4096)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.diag(A) @ B


M = 4096
N = 4096


def get_inputs():
    return [torch.rand(N), torch.rand(N, M)]


def get_init_inputs():
    return []
