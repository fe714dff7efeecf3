# Correct: the scalar scale_factor folded into the conv weight and bias at init (W·s, b·s); fp32-equal.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, scale_factor):
        super().__init__()
        conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        with torch.no_grad():
            self.weight = nn.Parameter(conv.weight * scale_factor)
            self.bias = nn.Parameter(conv.bias * scale_factor)

    def forward(self, x):
        return torch.tanh(torch.nn.functional.conv2d(x, self.weight, self.bias))
