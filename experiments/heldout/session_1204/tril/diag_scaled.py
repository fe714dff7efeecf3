import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        out = torch.tril(torch.matmul(A, B))
        # bug: the diagonal is scaled by (1 + 3e-5)
        idx = torch.arange(A.shape[0])
        out[idx, idx] = out[idx, idx] * (1 + 3e-5)
        return out
