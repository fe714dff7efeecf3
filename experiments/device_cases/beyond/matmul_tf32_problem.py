"""Square matrix product, (1024, 1024) · (1024, 1024), in KernelBench's format."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(1024, 1024), torch.rand(1024, 1024)]


def get_init_inputs():
    return []
