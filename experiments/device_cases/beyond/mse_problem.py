"""Mean squared error of (128, 4096) predictions against targets, a scalar, in KernelBench's format."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, predictions, targets):
        return torch.mean((predictions - targets) ** 2)


def get_inputs():
    return [torch.rand(128, 4096), torch.rand(128, 4096)]


def get_init_inputs():
    return []
