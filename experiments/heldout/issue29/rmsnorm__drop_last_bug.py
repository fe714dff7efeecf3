import torch
from torch import nn

"""RMSNorm, mean of squares skips the last channel"""


class ModelNew(nn.Module):
    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x):
        ss = (x[:, :-1] * x[:, :-1]).sum(dim=1, keepdim=True)
        return x * torch.rsqrt(ss / self.num_features + self.eps)
