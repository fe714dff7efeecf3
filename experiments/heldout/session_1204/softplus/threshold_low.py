import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        # bug: linear above 8 instead of 20
        return torch.where(x > 8, x, torch.log1p(torch.exp(x)))
