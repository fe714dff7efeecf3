import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(16, 32, 64) * 0.5]


def get_init_inputs():
    return [(32, 64)]
