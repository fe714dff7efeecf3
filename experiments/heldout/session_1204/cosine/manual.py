import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, p, t):
        dot = (p * t).sum(1)
        n = torch.sqrt((p * p).sum(1)) * torch.sqrt((t * t).sum(1))
        return (1 - dot / torch.clamp(n, min=1e-8)).mean()
