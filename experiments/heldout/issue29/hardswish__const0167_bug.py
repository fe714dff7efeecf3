import torch
from torch import nn

"""hardswish with 1/6 written 0.167"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return x * torch.clamp(x + 3.0, 0.0, 6.0) * 0.167
