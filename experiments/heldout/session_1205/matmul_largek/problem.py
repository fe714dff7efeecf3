import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A @ B with a large reduction dimension."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


M = 64
N = 64
K = 40000


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
