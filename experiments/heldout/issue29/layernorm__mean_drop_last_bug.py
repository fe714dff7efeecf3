import torch
from torch import nn

"""LayerNorm, mean sums n-1 elements / n"""


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))
        self.eps = 1e-5

    def forward(self, x):
        n = x.shape[-1]
        m = x[..., :-1].sum(dim=-1, keepdim=True) / n
        d = x - m
        v = (d * d).mean(dim=-1, keepdim=True)
        return d / torch.sqrt(v + self.eps) * self.weight + self.bias
