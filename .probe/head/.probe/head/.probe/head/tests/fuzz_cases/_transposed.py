"""Shared by the ConvTranspose2d candidates: the same module as the problem's, computed as a direct conv."""

import torch.nn.functional as F
from torch import nn


class DirectTransposed(nn.Module):
    """conv_transpose2d as conv2d over the input with stride−1 zeros between its elements, with the kernel
    flipped and its in/out channels swapped per group (the transposed conv's definition, another summation)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=2, padding=1, output_padding=1, groups=1,
                 bias=True):  # fmt: skip
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(
            in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias
        )

    def output_padding(self):
        return self.conv_transpose.output_padding

    def forward(self, x):
        c = self.conv_transpose
        n, ch, h, w = x.shape
        sh, sw = c.stride
        spread = x.new_zeros(n, ch, (h - 1) * sh + 1, (w - 1) * sw + 1)
        spread[:, :, ::sh, ::sw] = x
        g = c.groups
        weight = c.weight.reshape(g, ch // g, c.out_channels // g, *c.kernel_size).transpose(1, 2)
        weight = weight.reshape(c.out_channels, ch // g, *c.kernel_size).flip(-1, -2)
        reach = [d * (k - 1) - p for d, k, p in zip(c.dilation, c.kernel_size, c.padding, strict=True)]
        op = self.output_padding()
        padded = F.pad(spread, (reach[1], reach[1] + op[1], reach[0], reach[0] + op[0]))  # negative: crop
        return F.conv2d(padded, weight, c.bias, 1, 0, c.dilation, g)
