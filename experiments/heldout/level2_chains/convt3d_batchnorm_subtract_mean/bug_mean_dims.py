import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """The subtracted mean is reduced over (depth, height) only: the width axis was left out."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, bias=True):
        super(ModelNew, self).__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=bias
        )
        self.batch_norm = nn.BatchNorm3d(out_channels)

    def forward(self, x):
        x = self.batch_norm(self.conv_transpose(x))
        return x - torch.mean(x, dim=(2, 3), keepdim=True)
