import torch
from torch import nn

"""odd-symmetric tanh, negative branch not negated"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        t = 1.0 - 2.0 / (torch.exp(2.0 * x.abs()) + 1.0)
        return torch.where(x >= 0, t, t)
