import torch
from torch import nn

"""softplus: max(x,0)+log1p(exp(-|x|))"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return torch.clamp(x, min=0) + torch.log1p(torch.exp(-x.abs()))
