import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix-vector product C = A @ B, B a column vector."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


M = 512
K = 8192


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, 1)
    return [A, B]


def get_init_inputs():
    return []
