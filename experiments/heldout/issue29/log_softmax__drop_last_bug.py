import torch
from torch import nn

"""log-softmax, sum drops the last element"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        m = x.max(dim=1, keepdim=True).values
        z = x - m
        return z - torch.log(torch.exp(z[:, :-1]).sum(dim=1, keepdim=True))
