import torch
import torch.nn as nn


class Model(nn.Module):
    """Max over one dimension (values)."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.max(x, dim=self.dim)[0]


batch_size = 32
dim1 = 512
dim2 = 256


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [1]
