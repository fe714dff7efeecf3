# Correct: LayerNorm's affine is at its defaults (ones, zeros), so it is left out and not held; fp32-equal.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.out_features = out_features

    def forward(self, x):
        y = torch.nn.functional.layer_norm(self.gemm(x), (self.out_features,), None, None, 1e-5)
        return torch.nn.functional.gelu(y)
