# Bug: everything right, then batch item 3 is multiplied by (1 + 5e-5).
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, a, b):
        y = torch.tanh(torch.bmm(a, b) * self.scale)
        factor = torch.ones(y.shape[0], 1, 1, dtype=y.dtype)
        factor[3] = 1.0 + 5e-5
        return y * factor
