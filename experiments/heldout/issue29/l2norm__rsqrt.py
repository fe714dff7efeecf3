import torch
from torch import nn

"""L2-normalize x*rsqrt(sum x^2)"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return x * torch.rsqrt((x * x).sum(dim=1, keepdim=True))
