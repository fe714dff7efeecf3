import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        # bug: argument clamped to [-10, 10]: outputs 3*sigmoid(+-10) instead of 0 / 3
        return torch.sigmoid(torch.clamp(x, -10, 10)) * 3.0
