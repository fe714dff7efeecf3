import torch
from torch import nn

"""softmax, sum drops the last element"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        e = torch.exp(x - x.max(dim=1, keepdim=True).values)
        return e / e[:, :-1].sum(dim=1, keepdim=True)
