import math

import torch
from torch import nn

"""GELU with 0.49 for 0.5"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return 0.49 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
