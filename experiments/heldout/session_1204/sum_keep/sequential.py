import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        acc = torch.zeros_like(x.narrow(self.dim, 0, 1))
        for i in range(x.shape[self.dim]):
            acc = acc + x.narrow(self.dim, i, 1)
        return acc
