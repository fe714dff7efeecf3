import torch
from torch import nn

"""GroupNorm by hand, two-pass variance"""


class ModelNew(nn.Module):
    def __init__(self, num_groups, num_channels):
        super().__init__()
        self.g = num_groups
        self.weight = nn.Parameter(torch.ones(num_channels))
        self.bias = nn.Parameter(torch.zeros(num_channels))

    def forward(self, x):
        N, C, H, W = x.shape
        xg = x.view(N, self.g, -1)
        m = xg.mean(dim=-1, keepdim=True)
        d = xg - m
        v = (d * d).mean(dim=-1, keepdim=True)
        y = (d / torch.sqrt(v + 1e-5)).view(N, C, H, W)
        return y * self.weight.view(1, C, 1, 1) + self.bias.view(1, C, 1, 1)
