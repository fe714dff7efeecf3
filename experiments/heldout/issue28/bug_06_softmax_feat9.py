# Bug: softmax right, then output feature 9 (of 128) is multiplied by (1 + 5e-5) in every row.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = torch.softmax(self.gemm(x), dim=1)
        factor = torch.ones(1, y.shape[1], dtype=y.dtype)
        factor[0, 9] = 1.0 + 5e-5
        return y * factor
