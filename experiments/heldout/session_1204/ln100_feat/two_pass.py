import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)

    def forward(self, x):
        mu = x.mean(1, keepdim=True)
        var = ((x - mu) ** 2).mean(1, keepdim=True)
        return (x - mu) * torch.rsqrt(var + self.ln.eps) * self.ln.weight + self.ln.bias
