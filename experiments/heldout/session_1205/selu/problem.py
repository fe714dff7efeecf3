import torch
import torch.nn as nn


class Model(nn.Module):
    """SELU."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.selu(x)


def get_inputs():
    return [torch.randn(1024, 2048) * 2.0]


def get_init_inputs():
    return []
