# Bug: every boundary voxel gets 1e-4 × the conv output's std added before sigmoid; the interior is right.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=1)

    def forward(self, x):
        z = self.conv(x)
        edge = torch.ones(z.shape[-3:], dtype=z.dtype)
        edge[1:-1, 1:-1, 1:-1] = 0.0
        return torch.sigmoid(z + 1e-4 * z.std() * edge)
