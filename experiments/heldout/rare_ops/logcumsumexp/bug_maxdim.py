import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super(ModelNew, self).__init__()
        self.dim = dim

    def forward(self, x):
        m = x.amax(dim=0, keepdim=True)
        return torch.log(torch.cumsum(torch.exp(x - m), dim=self.dim)) + m
