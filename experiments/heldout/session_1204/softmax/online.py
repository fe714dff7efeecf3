import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        m = torch.full((x.shape[0], 1), -float("inf"))
        d = torch.zeros(x.shape[0], 1)
        for c in torch.split(x, 256, dim=1):
            mc = torch.maximum(m, c.max(1, keepdim=True).values)
            d = d * torch.exp(m - mc) + torch.exp(c - mc).sum(1, keepdim=True)
            m = mc
        return torch.exp(x - m) / d
