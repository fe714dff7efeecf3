import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, p, t):
        return torch.mean(torch.clamp(1.0002 - p * t, min=0))
