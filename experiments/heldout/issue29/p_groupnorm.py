import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, num_groups, num_channels):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, num_channels)

    def forward(self, x):
        return self.gn(x)


def get_inputs():
    return [torch.randn(8, 32, 16, 16)]


def get_init_inputs():
    return [8, 32]
