"""KernelBench level1/8_Matmul_with_irregular_shapes_.py's shape: (8205, 2949) @ (2949, 5921), torch.rand."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 8205
K = 2949
N = 5921


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
