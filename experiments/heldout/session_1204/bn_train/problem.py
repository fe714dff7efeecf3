import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.bn = nn.BatchNorm1d(c)

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(64, 128) * 10 + 50]


def get_init_inputs():
    return [128]
