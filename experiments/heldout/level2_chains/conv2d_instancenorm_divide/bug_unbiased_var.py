import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Hand-written InstanceNorm that divides the sum of squares by (H*W - 1)."""

    def __init__(self, in_channels, out_channels, kernel_size, divide_by):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.instance_norm = nn.InstanceNorm2d(out_channels)
        self.divide_by = divide_by

    def forward(self, x):
        y = self.conv(x)
        mean = y.mean(dim=(2, 3), keepdim=True)
        var = y.var(dim=(2, 3), keepdim=True)
        return (y - mean) / torch.sqrt(var + self.instance_norm.eps) / self.divide_by
