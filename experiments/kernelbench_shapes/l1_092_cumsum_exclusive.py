"""KernelBench level1/92_cumsum_exclusive.py's shape (v0.2 fix): exclusive cumsum, dim 1, (32768, 32768) rand."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        first = torch.zeros_like(x.select(self.dim, 0).unsqueeze(self.dim))
        shifted = torch.cat((first, x), dim=self.dim).narrow(self.dim, 0, x.size(self.dim))
        return torch.cumsum(shifted, dim=self.dim)


batch_size = 32768
input_shape = (32768,)
dim = 1


def get_inputs():
    return [torch.rand(batch_size, *input_shape)]


def get_init_inputs():
    return [dim]
