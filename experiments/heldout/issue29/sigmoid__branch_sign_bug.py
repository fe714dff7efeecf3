import torch
from torch import nn

"""stable sigmoid, x<0 branch uses 1/(1+e) (sign error)"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        e = torch.exp(-x.abs())
        return torch.where(x >= 0, 1.0 / (1.0 + e), 1.0 / (1.0 + e))
