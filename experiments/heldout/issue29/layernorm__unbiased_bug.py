import torch
from torch import nn

"""LayerNorm with unbiased (n-1) variance"""


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))
        self.eps = 1e-5

    def forward(self, x):
        m = x.mean(dim=-1, keepdim=True)
        v = x.var(dim=-1, keepdim=True, unbiased=True)
        return (x - m) / torch.sqrt(v + self.eps) * self.weight + self.bias
