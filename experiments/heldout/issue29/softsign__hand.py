import torch
from torch import nn

"""softsign x/(1+|x|)"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return x / (1.0 + torch.abs(x))
