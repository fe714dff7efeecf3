import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        e = torch.exp(x - x.max(1, keepdim=True).values)
        return e / (e.sum(1, keepdim=True) + 1e-3)
