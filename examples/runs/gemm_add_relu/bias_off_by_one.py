"""A fused kernel whose bias loop stops one feature short: the last output feature never gets its bias."""

import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = self.gemm(x)
        y[:, :-1] += self.bias[:-1]
        return torch.relu(y)
