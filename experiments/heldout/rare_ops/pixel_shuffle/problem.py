import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Space-to-depth (pixel_unshuffle), a 3x3 convolution at the lower resolution, then depth-to-space
    (pixel_shuffle) back to the input resolution.
    """

    def __init__(self, in_channels, out_channels, factor):
        super(Model, self).__init__()
        self.factor = factor
        self.conv = nn.Conv2d(in_channels * factor * factor, out_channels * factor * factor, 3, padding=1)

    def forward(self, x):
        x = F.pixel_unshuffle(x, self.factor)
        x = self.conv(x)
        return F.pixel_shuffle(x, self.factor)


batch_size = 4
in_channels = 4
out_channels = 12
factor = 2
height = 32
width = 32


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, factor]
