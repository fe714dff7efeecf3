import torch
from torch import nn

"""tanh as (e^x-e^-x)/(e^x+e^-x)"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        a = torch.exp(x)
        b = torch.exp(-x)
        return (a - b) / (a + b)
