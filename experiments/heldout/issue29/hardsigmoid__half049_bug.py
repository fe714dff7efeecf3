import torch
from torch import nn

"""hardsigmoid with 0.49 for 0.5"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return torch.clamp(x / 6.0 + 0.49, 0.0, 1.0)
