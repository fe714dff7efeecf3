import torch
from torch import nn

"""ELU with alpha 1.01 instead of alpha"""


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return torch.where(x > 0, x, 1.01 * (torch.exp(x) - 1.0))
