import torch
from torch import nn

"""LayerNorm by hand, E[x^2]-E[x]^2 and rsqrt"""


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))
        self.eps = 1e-5

    def forward(self, x):
        n = x.shape[-1]
        m = x.sum(dim=-1, keepdim=True) / n
        v = (x * x).sum(dim=-1, keepdim=True) / n - m * m
        return (x - m) * torch.rsqrt(v + self.eps) * self.weight + self.bias
