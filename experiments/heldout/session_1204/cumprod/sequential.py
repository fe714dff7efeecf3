import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        out = torch.empty_like(x)
        acc = x[:, 0].clone()
        out[:, 0] = acc
        for i in range(1, x.shape[1]):
            acc = acc * x[:, i]
            out[:, i] = acc
        return out
