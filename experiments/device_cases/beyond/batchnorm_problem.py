"""BatchNorm2d in training mode (the module's default: the batch's statistics) in KernelBench's format."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features)

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.rand(16, 64, 48, 48)]


def get_init_inputs():
    return [64]
