import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """
    A 1x1 convolution followed by a nearest-neighbour resize to a fixed, non-integer-ratio size.
    """

    def __init__(self, in_channels, out_channels, out_h, out_w):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=1)
        self.out_h = out_h
        self.out_w = out_w

    def forward(self, x):
        x = self.conv(x)
        return F.interpolate(x, size=(self.out_h, self.out_w), mode="nearest")


batch_size = 4
in_channels = 128
out_channels = 24
in_h = 13
in_w = 17
out_h = 20
out_w = 27


def get_inputs():
    return [torch.randn(batch_size, in_channels, in_h, in_w)]


def get_init_inputs():
    return [in_channels, out_channels, out_h, out_w]
