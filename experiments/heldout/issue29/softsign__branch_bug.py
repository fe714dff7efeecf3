import torch
from torch import nn

"""softsign with x/(1+x) on the negative branch (should be 1-x)"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return torch.where(x >= 0, x / (1.0 + x), x / (1.0 + x))
