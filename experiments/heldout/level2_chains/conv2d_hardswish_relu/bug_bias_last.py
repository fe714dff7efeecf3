import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """Bias added with a slice that stops one channel short: the last channel has no bias."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        y = F.conv2d(x, self.conv.weight)
        c = y.shape[1]
        b = F.pad(self.conv.bias[: c - 1], (0, 1))
        y = y + b.view(1, c, 1, 1)
        return torch.relu(F.hardswish(y))
