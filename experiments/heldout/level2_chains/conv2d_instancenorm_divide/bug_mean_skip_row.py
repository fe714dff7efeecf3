import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """
    Plane statistics reduced over rows 0..H-2 only (row loop bound off by one); the normalisation is
    then applied to the whole plane.
    """

    def __init__(self, in_channels, out_channels, kernel_size, divide_by):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.instance_norm = nn.InstanceNorm2d(out_channels)
        self.divide_by = divide_by

    def forward(self, x):
        y = self.conv(x)
        part = y[:, :, :-1, :]
        mean = part.mean(dim=(2, 3), keepdim=True)
        var = ((part - mean) ** 2).mean(dim=(2, 3), keepdim=True)
        return (y - mean) / torch.sqrt(var + self.instance_norm.eps) / self.divide_by
