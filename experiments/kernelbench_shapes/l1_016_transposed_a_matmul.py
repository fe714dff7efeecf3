"""KernelBench level1/16_Matmul_with_transposed_A.py's shape: Aᵀ @ B, A (8192, 2048), B (8192, 4096), torch.rand."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.T, B)


M = 1024 * 2
K = 4096 * 2
N = 2048 * 2


def get_inputs():
    return [torch.rand(K, M), torch.rand(K, N)]


def get_init_inputs():
    return []
