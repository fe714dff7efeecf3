import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, dim=1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.log(torch.softmax(x, dim=self.dim))
