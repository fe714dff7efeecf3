import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)

    def forward(self, x):
        n = x.shape[1]
        mu = x[:, :-1].sum(1, keepdim=True) / n + 100.0 / n  # bug: last element replaced by 100 in the mean
        var = ((x - mu) ** 2).mean(1, keepdim=True)
        return (x - mu) / torch.sqrt(var + self.ln.eps) * self.ln.weight + self.ln.bias
