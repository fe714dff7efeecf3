# Bug: the kernel's left-border path (t < 2) forgets the bias, so the first two time steps of every channel are wrong.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=2)

    def forward(self, x):
        z = torch.nn.functional.conv1d(x, self.conv.weight, None, padding=2)
        has_bias = torch.ones(z.shape[-1], dtype=z.dtype)
        has_bias[:2] = 0.0
        return torch.tanh(z + self.conv.bias.reshape(1, -1, 1) * has_bias)
