import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """
    Implicit-GEMM convolution (unfold + matmul), min as -max(-x), tanh from exp of -2|x|.
    """

    def __init__(self, in_channels, out_channels, kernel_size):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    @staticmethod
    def _tanh(x):
        e = torch.exp(-2.0 * x.abs())
        return torch.sign(x) * (1.0 - e) / (1.0 + e)

    def forward(self, x):
        w = self.conv.weight
        n, _, h, wd = x.shape
        kh, kw = w.shape[2], w.shape[3]
        oh, ow = h - kh + 1, wd - kw + 1
        cols = F.unfold(x, (kh, kw))  # n, c*kh*kw, oh*ow
        y = torch.matmul(w.reshape(w.shape[0], -1), cols) + self.conv.bias[:, None]
        y = y.reshape(n, w.shape[0], oh, ow)
        y = -torch.amax(-y, dim=1, keepdim=True)
        return self._tanh(self._tanh(y))
