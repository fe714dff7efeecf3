import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_f, out_f, scale_shape):
        super().__init__()
        self.gemm = nn.Linear(in_f, out_f)
        self.scale = nn.Parameter(torch.randn(scale_shape))

    def forward(self, x):
        s = self.scale.clone()
        s[-1] = s[-1] * (1 + 1e-4)
        return torch.sigmoid(self.gemm(x) * s)
