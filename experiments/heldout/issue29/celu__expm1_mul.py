import torch
from torch import nn

"""CELU with expm1(x*(1/alpha))"""


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return torch.where(x > 0, x, self.alpha * torch.expm1(x * (1.0 / self.alpha)))
