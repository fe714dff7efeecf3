import math

import torch
from torch import nn

"""GELU 0.5*x*erfc(-x/sqrt(2))"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return 0.5 * x * torch.erfc(-x / math.sqrt(2.0))
