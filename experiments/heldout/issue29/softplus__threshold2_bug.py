import torch
from torch import nn

"""softplus with threshold 2 instead of 20"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return torch.where(x > 2.0, x, torch.log1p(torch.exp(x)))
