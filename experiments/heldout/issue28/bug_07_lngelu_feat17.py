# Bug: LayerNorm right, then feature 17 of its output is multiplied by (1 + 1e-4) before GELU.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.ln = nn.LayerNorm(out_features)

    def forward(self, x):
        z = self.ln(self.gemm(x))
        factor = torch.ones(1, z.shape[1], dtype=z.dtype)
        factor[0, 17] = 1.0 + 1e-4
        return torch.nn.functional.gelu(z * factor)
