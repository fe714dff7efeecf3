import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """
    With stride 1 and no padding every input pixel meets every kernel tap inside the output, so the
    spatial mean of the transposed conv is (sum_hw x) . (sum_taps W) / (H_out * W_out) + b: a small
    GEMM on the input's spatial sums; the conv output is never materialised.
    """

    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super(ModelNew, self).__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        ct = self.conv_transpose
        kh, kw = ct.weight.shape[2], ct.weight.shape[3]
        h_out = x.shape[2] + kh - 1
        w_out = x.shape[3] + kw - 1
        xs = x.sum(dim=(2, 3))  # n, c_in
        wsum = ct.weight.sum(dim=(2, 3))  # c_in, c_out
        m = xs @ wsum / (h_out * w_out) + ct.bias + self.bias.reshape(-1)
        return torch.logsumexp(m, dim=1, keepdim=True) * 10.0
