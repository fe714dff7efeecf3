import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        xb = x.bfloat16()
        ms = (xb.float() ** 2).mean(1, keepdim=True)
        return (xb.float() * torch.rsqrt(ms + self.eps)).bfloat16().float()
