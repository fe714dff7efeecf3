import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Input-sum trick, but the output size is taken as H + k - 2 (off by one) in the mean's divisor."""

    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super(ModelNew, self).__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        ct = self.conv_transpose
        kh, kw = ct.weight.shape[2], ct.weight.shape[3]
        h_out = x.shape[2] + kh - 2
        w_out = x.shape[3] + kw - 1
        xs = x.sum(dim=(2, 3))
        wsum = ct.weight.sum(dim=(2, 3))
        m = xs @ wsum / (h_out * w_out) + ct.bias + self.bias.reshape(-1)
        return torch.logsumexp(m, dim=1, keepdim=True) * 10.0
