import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """Convolution as im2col (unfold) + one GEMM with the bias in the epilogue."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        w = self.conv.weight
        n, _, h, wd = x.shape
        oc, _, kh, kw = w.shape
        cols = F.unfold(x, (kh, kw)).transpose(1, 2)  # n, L, c*kh*kw
        y = torch.matmul(cols, w.reshape(oc, -1).t()) + self.conv.bias
        y = y.transpose(1, 2).reshape(n, oc, h - kh + 1, wd - kw + 1)
        return torch.relu(F.hardswish(y))
