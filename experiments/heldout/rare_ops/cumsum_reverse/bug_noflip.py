import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super(ModelNew, self).__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumsum(torch.flip(x, [self.dim]), dim=self.dim)
