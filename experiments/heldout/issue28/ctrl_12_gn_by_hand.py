# Correct: GroupNorm by hand (two-pass, rsqrt) with the held affine, then tanh, fp32; another evaluation order only.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.group_norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        y = self.conv(x)
        n, c, h, w = y.shape
        gn = self.group_norm
        g = y.reshape(n, gn.num_groups, -1)
        mean = g.sum(dim=2, keepdim=True) / g.shape[2]
        d = g - mean
        var = (d * d).sum(dim=2, keepdim=True) / g.shape[2]
        z = (d * torch.rsqrt(var + gn.eps)).reshape(n, c, h, w)
        return torch.tanh(z * gn.weight.reshape(1, -1, 1, 1) + gn.bias.reshape(1, -1, 1, 1))
