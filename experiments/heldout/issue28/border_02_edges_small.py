# Bug: 1e-4 × the conv output's std added before SiLU on all four edges (rows/columns 0 and 23); interior right.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)

    def forward(self, x):
        z = self.conv(x)
        edge = torch.ones(z.shape[-2], z.shape[-1], dtype=z.dtype)
        edge[1:-1, 1:-1] = 0.0
        return torch.nn.functional.silu(z + 1e-4 * z.std() * edge)
