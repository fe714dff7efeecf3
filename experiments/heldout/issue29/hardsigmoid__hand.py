import torch
from torch import nn

"""hardsigmoid clamp(x/6+0.5,0,1)"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return torch.clamp(x / 6.0 + 0.5, 0.0, 1.0)
