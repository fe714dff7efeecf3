import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, dim=1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        m = x.max(1, keepdim=True).values
        s = torch.exp(x[:, :-1] - m).sum(1, keepdim=True)
        return x - m - torch.log(s)
