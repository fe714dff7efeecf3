import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        ss = (x[:, :32] * x[:, :32]).sum(1, keepdim=True) + (x[:, 32:] * x[:, 32:]).sum(1, keepdim=True)
        return x * torch.rsqrt(ss / x.shape[1] + self.eps)
