import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """ELU with a given alpha."""

    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return F.elu(x, alpha=self.alpha)


def get_inputs():
    return [torch.randn(1024, 2048) * 2.0]


def get_init_inputs():
    return [0.7]
