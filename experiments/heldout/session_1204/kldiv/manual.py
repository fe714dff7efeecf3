import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, p, t):
        return (t * (torch.log(t) - torch.log(p))).sum(dim=1).mean()
