import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.bn = nn.BatchNorm1d(c)

    def forward(self, x):
        mu = x.mean(0, keepdim=True)
        var = ((x - mu) ** 2).mean(0, keepdim=True)
        return (x - mu) / torch.sqrt(var + self.bn.eps) * self.bn.weight + self.bn.bias
