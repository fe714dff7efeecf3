import torch
from torch import nn

"""hardswish x*min(max(x+3,0),6)*(1/6)"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return x * torch.minimum(torch.maximum(x + 3.0, torch.zeros_like(x)), torch.full_like(x, 6.0)) * (1.0 / 6.0)
