import torch
from torch import nn

"""L2-normalize, sum of squares skips the last element"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        n = torch.sqrt((x[:, :-1] * x[:, :-1]).sum(dim=1, keepdim=True))
        return x / n
