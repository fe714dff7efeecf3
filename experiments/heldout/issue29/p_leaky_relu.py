import torch
import torch.nn.functional as F
from torch import nn


class Model(nn.Module):
    def __init__(self, slope):
        super().__init__()
        self.slope = slope

    def forward(self, x):
        return F.leaky_relu(x, self.slope)


def get_inputs():
    return [torch.randn(16, 256) * 4]


def get_init_inputs():
    return [0.01]
