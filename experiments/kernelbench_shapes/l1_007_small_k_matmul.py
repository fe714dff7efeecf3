"""KernelBench level1/7_Matmul_with_small_K_dimension_.py's shape: (32768, 64) @ (64, 32768), torch.rand."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 16384 * 2
N = 16384 * 2
K = 32 * 2


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
