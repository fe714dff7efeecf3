import torch
from torch import nn

"""LeakyReLU as max(x, 0.01x)"""


class ModelNew(nn.Module):
    def __init__(self, slope):
        super().__init__()
        self.slope = slope

    def forward(self, x):
        return torch.maximum(x, self.slope * x)
