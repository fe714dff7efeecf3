import torch
from torch import nn

"""RMSNorm with eps added after sqrt"""


class ModelNew(nn.Module):
    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x):
        return x / (torch.sqrt(torch.mean(x * x, dim=1, keepdim=True)) + self.eps)
