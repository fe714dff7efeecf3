import torch
from torch import nn

"""tanh as (exp(2x)-1)/(exp(2x)+1)"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        e = torch.exp(2.0 * x)
        return (e - 1.0) / (e + 1.0)
