# Correct: the bmm summed over K in four blocks of 16, then scaled and tanh, fp32; another accumulation order only.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, a, b):
        y = torch.bmm(a[:, :, :16], b[:, :16, :])
        for k in range(16, a.shape[2], 16):
            y = y + torch.bmm(a[:, :, k : k + 16], b[:, k : k + 16, :])
        return torch.tanh(y * self.scale)
