import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def _out_size(n, k, s, p, d):
    out = math.ceil((n + 2 * p - d * (k - 1) - 1) / s) + 1
    if (out - 1) * s >= n + p:
        out -= 1
    return out


class ModelNew(nn.Module):
    """Convolution by im2col + matmul; pooling by unfold."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)
        self.pool = nn.MaxPool2d(kernel_size, stride=stride, padding=padding, dilation=dilation, ceil_mode=True)
        self.k, self.s, self.p, self.d = kernel_size, stride, padding, dilation

    def forward(self, x):
        n, _, h, w = x.shape
        cols = F.unfold(x, kernel_size=3)
        bias = self.conv.bias
        y = torch.matmul(self.conv.weight.view(self.conv.out_channels, -1), cols) + bias[:, None]
        y = y.view(n, -1, h - 2, w - 2)
        k, s, p, d = self.k, self.s, self.p, self.d
        span = d * (k - 1) + 1
        oh = _out_size(y.shape[2], k, s, p, d)
        ow = _out_size(y.shape[3], k, s, p, d)
        rh = (oh - 1) * s + span - p - y.shape[2]
        rw = (ow - 1) * s + span - p - y.shape[3]
        yp = F.pad(y, (p, rw, p, rh), value=0.0)
        win = yp.unfold(2, span, s).unfold(3, span, s)[..., ::d, ::d]
        return win.amax(dim=(-2, -1))
