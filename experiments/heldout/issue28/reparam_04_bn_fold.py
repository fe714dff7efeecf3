# Correct: the eval-mode BatchNorm (same draws) folded into the conv weight and bias at init; fp32-equal.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        bn = nn.BatchNorm2d(out_channels)
        with torch.no_grad():
            bn.running_mean.uniform_(-0.2, 0.2)
            bn.running_var.uniform_(0.5, 1.5)
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.3, 0.3)
            s = bn.weight / torch.sqrt(bn.running_var + bn.eps)
            self.weight = nn.Parameter(conv.weight * s.reshape(-1, 1, 1, 1))
            self.bias = nn.Parameter((conv.bias - bn.running_mean) * s + bn.bias)

    def forward(self, x):
        return torch.tanh(torch.nn.functional.conv2d(x, self.weight, self.bias, padding=1))
