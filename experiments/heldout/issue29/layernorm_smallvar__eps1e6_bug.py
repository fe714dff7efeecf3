import torch
from torch import nn

"""LayerNorm with eps 1e-6 (var ~4e-6)"""


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))
        self.eps = 1e-5

    def forward(self, x):
        m = x.mean(dim=-1, keepdim=True)
        d = x - m
        v = (d * d).mean(dim=-1, keepdim=True)
        return d / torch.sqrt(v + 1e-6) * self.weight + self.bias
