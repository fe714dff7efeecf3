# Bug: circular padding except zeros on the right: the last column loses the wrapped-around first input column.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=0)

    def forward(self, x):
        xp = torch.nn.functional.pad(x, (1, 1, 1, 1), mode="circular")
        keep = torch.ones(xp.shape[-1], dtype=x.dtype)
        keep[-1] = 0.0
        return torch.tanh(self.conv(xp * keep))
