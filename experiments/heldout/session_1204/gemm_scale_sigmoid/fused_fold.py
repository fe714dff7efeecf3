import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_f, out_f, scale_shape):
        super().__init__()
        self.gemm = nn.Linear(in_f, out_f)
        self.scale = nn.Parameter(torch.randn(scale_shape))

    def forward(self, x):
        w = self.gemm.weight * self.scale.unsqueeze(1)
        b = self.gemm.bias * self.scale
        return 1.0 / (1.0 + torch.exp(-(x @ w.t() + b)))
