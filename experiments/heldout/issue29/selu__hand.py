import torch
from torch import nn

"""SELU by hand with full constants"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        a = 1.6732632423543772848170429916717
        s = 1.0507009873554804934193349852946
        return s * (torch.clamp(x, min=0) + torch.clamp(a * (torch.exp(x) - 1.0), max=0))
