import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        # bug: a thread re-adds element 0 instead of element 65535
        return torch.sum(x[:, :-1], dim=1) + x[:, 0]
