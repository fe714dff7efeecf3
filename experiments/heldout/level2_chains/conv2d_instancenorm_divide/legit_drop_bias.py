import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """
    The conv bias is constant over each (n, c) plane, so InstanceNorm's mean subtraction removes it:
    the conv runs without bias. InstanceNorm written out (two-pass biased variance) and the division
    folded into the normalising factor.
    """

    def __init__(self, in_channels, out_channels, kernel_size, divide_by):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.instance_norm = nn.InstanceNorm2d(out_channels)
        self.divide_by = divide_by

    def forward(self, x):
        y = F.conv2d(x, self.conv.weight)
        mean = y.mean(dim=(2, 3), keepdim=True)
        d = y - mean
        var = (d * d).mean(dim=(2, 3), keepdim=True)
        return d * (torch.rsqrt(var + self.instance_norm.eps) / self.divide_by)
