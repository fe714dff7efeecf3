import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super(ModelNew, self).__init__()
        self.dim = dim

    def forward(self, x):
        total = x.sum(dim=self.dim, keepdim=True)
        return total - torch.cumsum(x, dim=self.dim)
