import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        # bug: eps added to the squared norm, sized like a "safe" constant
        return x / torch.sqrt((x * x).sum() + 100.0)
