import math

import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        # tanh form with 0.044715 off by 0.1 %
        c = math.sqrt(2.0 / math.pi)
        return 0.5 * x * (1 + torch.tanh(c * (x + 0.044715 * 1.001 * x**3)))
