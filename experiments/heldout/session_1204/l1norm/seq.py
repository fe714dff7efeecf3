import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        s = torch.zeros(x.shape[0], 1)
        for c in torch.split(x.abs(), 1024, dim=1):
            s = s + c.sum(1, keepdim=True)
        return x * (1.0 / s)
