# Bug: everything right, then 2e-5 × the output's std is added to every output of batch item 6.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x):
        y = torch.tanh(self.conv(x))
        shift = torch.zeros(y.shape[0], 1, 1, dtype=y.dtype)
        shift[6] = 2e-5
        return y + shift * y.std()
