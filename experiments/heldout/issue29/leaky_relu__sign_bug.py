import torch
from torch import nn

"""LeakyReLU with -slope on the negative branch"""


class ModelNew(nn.Module):
    def __init__(self, slope):
        super().__init__()
        self.slope = slope

    def forward(self, x):
        return torch.where(x > 0, x, -self.slope * x)
