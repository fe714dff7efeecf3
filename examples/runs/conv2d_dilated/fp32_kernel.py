"""A hand-written fp32 kernel: im2col (unfold), each output's terms summed by two thread groups (the first and the
second half of its input channels) and the two partial sums added. Right; against a TF32 reference it fails the check
all the same. (One product of all the terms at once would be the CPU's own convolution bit for bit where that is an
im2col product too, as oneDNN's is on some hosts.)"""

import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding, dilation):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, dilation=dilation, bias=False)

    def forward(self, x):
        c = self.conv
        n, _, h, w = x.shape
        cols = F.unfold(x, c.kernel_size, dilation=c.dilation, padding=c.padding)  # (n, C·kh·kw, h·w)
        weight = c.weight.flatten(1)  # (out_channels, C·kh·kw), input channel outermost as in cols
        half = weight.shape[1] // 2
        out = weight[:, :half] @ cols[:, :half] + weight[:, half:] @ cols[:, half:]  # (n, out_channels, h·w)
        return out.view(n, -1, h, w)
