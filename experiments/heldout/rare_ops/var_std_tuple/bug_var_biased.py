import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super(ModelNew, self).__init__()
        self.dim = dim

    def forward(self, x):
        n = x.shape[self.dim]
        mean = x.sum(dim=self.dim, keepdim=True) / n
        d = x - mean
        ss = (d * d).sum(dim=self.dim)
        return ss / (n), torch.sqrt(ss / (n))
