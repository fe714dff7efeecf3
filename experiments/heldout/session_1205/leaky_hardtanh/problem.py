import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """LeakyReLU, then HardTanh to [-0.5, 0.5]."""

    def __init__(self, negative_slope: float = 0.02):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return F.hardtanh(F.leaky_relu(x, self.negative_slope), min_val=-0.5, max_val=0.5)


def get_inputs():
    return [torch.randn(1024, 2048) * 10.0]


def get_init_inputs():
    return [0.02]
