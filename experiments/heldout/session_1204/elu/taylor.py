import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        # bug: expm1 approximated by x + x^2/2 (fine near 0, wrong in general)
        return torch.where(x > 0, x, self.alpha * (x + 0.5 * x * x))
