import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        a = 1.6732632423543772848170429916717
        s = 1.0507009873554804934193349852946
        return s * torch.where(x > 0, x, a * torch.expm1(x))
