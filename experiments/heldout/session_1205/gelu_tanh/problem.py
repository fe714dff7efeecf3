import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """GELU, tanh approximation."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(1024, 2048) * 2.0]


def get_init_inputs():
    return []
