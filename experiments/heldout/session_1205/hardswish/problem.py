import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """HardSwish."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.hardswish(x)


def get_inputs():
    return [torch.randn(1024, 2048) * 3.0]


def get_init_inputs():
    return []
