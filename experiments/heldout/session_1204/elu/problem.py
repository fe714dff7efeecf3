import torch
import torch.nn.functional as F
from torch import nn


class Model(nn.Module):
    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return F.elu(x, alpha=self.alpha)


def get_inputs():
    return [torch.randn(64, 8192) * 1e-3]


def get_init_inputs():
    return [1.0]
