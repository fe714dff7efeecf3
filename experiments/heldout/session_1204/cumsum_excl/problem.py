import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        exclusive_cumsum = torch.cat((torch.zeros_like(x.select(self.dim, 0).unsqueeze(self.dim)), x), dim=self.dim)[
            :-1
        ]
        return torch.cumsum(exclusive_cumsum, dim=self.dim)


def get_inputs():
    return [torch.randn(129, 2000)]


def get_init_inputs():
    return [1]
