import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, p, t):
        d = (p - t).abs()
        layer_ = torch.where(d < 1.0, 0.5 * d * d, d - 0.5)
        return layer_.sum(dim=1).sum() / layer_.numel()
