import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_f, out_f, scale_shape):
        super().__init__()
        self.gemm = nn.Linear(in_f, out_f)
        self.scale = nn.Parameter(torch.randn(scale_shape))

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.gemm(x)
        return torch.sigmoid(y.float() * self.scale)
