import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        y = torch.cumsum(x.flip(1), dim=1).flip(1)
        # bug: last column is 0 instead of x[:, -1] (exclusive at one end)
        y[:, -1] = 0
        return y
