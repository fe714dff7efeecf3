import torch
from torch import nn

"""CELU with exp(x)/alpha in place of exp(x/alpha)"""


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return torch.where(x > 0, x, self.alpha * (torch.exp(x) / self.alpha - 1.0))
