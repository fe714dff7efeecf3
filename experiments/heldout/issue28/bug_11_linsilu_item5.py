# Bug: everything right, then batch item 5 (of 16) is multiplied by (1 + 1e-4).
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = torch.nn.functional.silu(self.gemm(x))
        factor = torch.ones(y.shape[0], 1, dtype=y.dtype)
        factor[5] = 1.0 + 1e-4
        return y * factor
