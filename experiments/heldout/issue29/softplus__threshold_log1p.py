import torch
from torch import nn

"""softplus: x if x>20 else log1p(exp(x))"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return torch.where(x > 20.0, x, torch.log1p(torch.exp(x)))
