import math

import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        # bug: 1/sqrt(2) off by 0.1 %
        return 0.5 * x * (1 + torch.erf(x * (1.001 / math.sqrt(2.0))))
