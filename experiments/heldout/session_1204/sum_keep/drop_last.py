import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        n = x.shape[self.dim]
        return torch.sum(x.narrow(self.dim, 0, n - 1), dim=self.dim, keepdim=True)
