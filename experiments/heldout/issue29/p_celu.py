import torch
import torch.nn.functional as F
from torch import nn


class Model(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return F.celu(x, alpha=self.alpha)


def get_inputs():
    return [torch.randn(16, 256) * 4]


def get_init_inputs():
    return [1.5]
