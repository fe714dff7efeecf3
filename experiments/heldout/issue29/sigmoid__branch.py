import torch
from torch import nn

"""stable sigmoid: exp(x)/(1+exp(x)) for x<0"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        e = torch.exp(-x.abs())
        return torch.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
