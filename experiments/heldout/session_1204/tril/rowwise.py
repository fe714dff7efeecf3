import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        M = A.shape[0]
        out = torch.zeros(M, M)
        for i in range(M):
            # C[i, :i+1] = sum_{k<=i} A[i,k] B[k,:i+1]
            out[i, : i + 1] = A[i, : i + 1] @ B[: i + 1, : i + 1]
        return out
