import torch
from torch import nn

"""sigmoid as 1/(1+exp(-x))"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return 1.0 / (1.0 + torch.exp(-x))
