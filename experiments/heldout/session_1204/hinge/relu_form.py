import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, p, t):
        return torch.relu(1 - p * t).reshape(-1, 128).sum(1).sum() / p.numel()
