import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, num_features):
        super().__init__()

    def forward(self, x):
        mu = x.mean(dim=(2, 3), keepdim=True)
        var = ((x - mu) ** 2).mean(dim=(2, 3), keepdim=True)
        return (x - mu) / torch.sqrt(var + 1e-5 * 1.0001)
