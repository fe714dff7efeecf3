"""KernelBench level1/9_Tall_skinny_matrix_multiplication_.py's shape: (32768, 32) @ (32, 32768), torch.rand."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


M = 16384 * 2
N = 16 * 2


def get_inputs():
    return [torch.rand(M, N), torch.rand(N, M)]


def get_init_inputs():
    return []
