"""Matrix product with a large inner dimension, (256, 131072) · (131072, 256), in KernelBench's format."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(256, 131072), torch.rand(131072, 256)]


def get_init_inputs():
    return []
