import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, num_features, num_groups):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)

    def forward(self, x):
        return self.gn(x)


def get_inputs():
    return [torch.randn(8, 32, 24, 24) * 3 + 1]


def get_init_inputs():
    return [32, 8]
