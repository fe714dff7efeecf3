import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_c, out_c, k, groups):
        super().__init__()
        self.conv = nn.Conv2d(in_c, out_c, k)
        self.gn = nn.GroupNorm(groups, out_c)

    def forward(self, x):
        y = self.gn(self.conv(x))
        return y * torch.sigmoid(y)


def get_inputs():
    return [torch.randn(8, 8, 20, 20)]


def get_init_inputs():
    return [8, 32, 3, 4]
