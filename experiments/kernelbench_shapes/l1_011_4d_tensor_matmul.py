"""KernelBench level1/11_4D_tensor_matrix_multiplication.py's shape: einsum bijl,lk (8, 256, 512, 256) × (256, 768)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.einsum("bijl,lk->bijk", A, B)


b = 8
i = 256
j = 512
l = 256  # noqa: E741 (KernelBench's name)
k = 768


def get_inputs():
    return [torch.rand(b, i, j, l), torch.rand(l, k)]


def get_init_inputs():
    return []
