import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        parts = [c.sum(dim=self.dim, keepdim=True) for c in torch.split(x, 100, dim=self.dim)]
        acc = parts[0]
        for p in parts[1:]:
            acc = acc + p
        return acc
