import torch
from torch import nn

"""tanh as 1-2/(exp(2x)+1)"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return 1.0 - 2.0 / (torch.exp(2.0 * x) + 1.0)
