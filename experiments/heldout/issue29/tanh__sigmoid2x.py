import torch
from torch import nn

"""tanh as 2*sigmoid(2x)-1"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return 2.0 / (1.0 + torch.exp(-2.0 * x)) - 1.0
