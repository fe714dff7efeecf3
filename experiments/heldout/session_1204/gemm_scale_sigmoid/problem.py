import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_f, out_f, scale_shape):
        super().__init__()
        self.gemm = nn.Linear(in_f, out_f)
        self.scale = nn.Parameter(torch.randn(scale_shape))

    def forward(self, x):
        return torch.sigmoid(self.gemm(x) * self.scale)


def get_inputs():
    return [torch.randn(128, 1024)]


def get_init_inputs():
    return [1024, 512, (512,)]
