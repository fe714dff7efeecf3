import torch
from torch import nn

"""hardswish x*clamp(x+3,0,6)/6"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return x * torch.clamp(x + 3.0, 0.0, 6.0) / 6.0
