import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """The extra bias is added to channels 0..C-2 only; channel C-1 misses it."""

    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super(ModelNew, self).__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = self.conv_transpose(x)
        m = y.mean(dim=(2, 3))
        c = m.shape[1]
        b = self.bias.reshape(-1)
        m = torch.cat([m[:, : c - 1] + b[: c - 1], m[:, c - 1 :]], dim=1)
        return torch.logsumexp(m, dim=1, keepdim=True) * 10.0
