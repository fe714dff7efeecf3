import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        return x / (torch.sqrt(torch.mean(x * x, dim=1, keepdim=True)) + self.eps)
