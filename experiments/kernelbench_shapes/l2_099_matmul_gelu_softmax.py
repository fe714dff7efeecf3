"""KernelBench level2/99_Matmul_GELU_Softmax.py's shape: softmax(gelu(Linear(8192, 8192)(x)), dim 1), x (1024, 8192)."""

import torch
import torch.nn.functional as F
from torch import nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        x = F.gelu(self.linear(x))
        return F.softmax(x, dim=1)


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
