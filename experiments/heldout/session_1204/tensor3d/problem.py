import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


N, M, K, L = 4, 32, 300, 40


def get_inputs():
    return [torch.randn(N, M, K) * 100, torch.randn(K, L) * 100]


def get_init_inputs():
    return []
