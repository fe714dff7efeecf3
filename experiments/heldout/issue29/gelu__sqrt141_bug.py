import torch
from torch import nn

"""GELU with sqrt(2) written 1.41"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x / 1.41))
