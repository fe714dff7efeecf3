import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, dim=1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        m = x.max(1, keepdim=True).values
        s = torch.zeros(x.shape[0], 1)
        for c in torch.split(x - m, 512, dim=1):
            s = s + torch.exp(c).sum(1, keepdim=True)
        return x - m - torch.log(s)
