import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        out = torch.tril(torch.matmul(A, B))
        # bug: the k == j term missing on the last row only
        M = A.shape[0]
        out[M - 1] -= A[M - 1] * torch.diagonal(B)
        return out
