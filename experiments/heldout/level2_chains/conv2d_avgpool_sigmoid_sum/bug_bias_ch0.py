import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """Bias broadcast from a buffer whose first entry is never written: channel 0 has no bias."""

    def __init__(self, in_channels, out_channels, kernel_size, pool_kernel_size):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.avg_pool = nn.AvgPool2d(pool_kernel_size)

    def forward(self, x):
        b = torch.zeros_like(self.conv.bias)
        b[1:] = self.conv.bias[1:]
        x = F.conv2d(x, self.conv.weight, b)
        x = torch.sigmoid(self.avg_pool(x))
        return torch.sum(x, dim=[1, 2, 3])
