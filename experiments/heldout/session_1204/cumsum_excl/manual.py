import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        z = torch.zeros(x.shape[0], 1)
        y = torch.cat((z, torch.cumsum(x, dim=1)), dim=1)
        return y[:-1]
