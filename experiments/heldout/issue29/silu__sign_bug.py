import torch
from torch import nn

"""SiLU as x/(1+exp(x)) (sign error)"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return x / (1.0 + torch.exp(x))
