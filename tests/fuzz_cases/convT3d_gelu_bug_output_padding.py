"""Bug: output_padding ignored: the transposed conv is computed without it and the end padded with GELU(0) = 0."""

import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, scaling_factor):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding
        )
        self.scaling_factor = scaling_factor

    def forward(self, x):
        c = self.conv_transpose
        y = F.conv_transpose3d(x, c.weight, c.bias, c.stride, c.padding, 0, c.groups, c.dilation)
        op = c.output_padding
        return F.pad(F.gelu(y * self.scaling_factor), (0, op[2], 0, op[1], 0, op[0]))
