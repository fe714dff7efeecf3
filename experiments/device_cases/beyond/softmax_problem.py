"""Softmax over dim 1 of (128, 16384) standard-normal values in KernelBench's format."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(128, 16384)]


def get_init_inputs():
    return []
