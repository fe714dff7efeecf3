import torch
from torch import nn

"""SELU with alpha 1.67"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        a = 1.67
        s = 1.0507009873554804934193349852946
        return s * torch.where(x > 0, x, a * (torch.exp(x) - 1.0))
