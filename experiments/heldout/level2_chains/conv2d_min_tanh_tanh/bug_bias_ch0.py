import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """Bias folded into the min loop, but channel 0 is initialised from the raw accumulator (no bias)."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        acc = F.conv2d(x, self.conv.weight)
        b = self.conv.bias
        m = acc[:, 0:1]
        for c in range(1, acc.shape[1]):
            m = torch.minimum(m, acc[:, c : c + 1] + b[c])
        return torch.tanh(torch.tanh(m))
