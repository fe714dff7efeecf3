import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, groups):
        super(ModelNew, self).__init__()
        self.conv_t = nn.ConvTranspose1d(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            output_padding=output_padding,
            groups=groups,
        )

    def forward(self, x):
        # transposed convolution = zero-insertion + padding + ordinary grouped convolution
        ct = self.conv_t
        k, s, p, op, g = ct.kernel_size[0], ct.stride[0], ct.padding[0], ct.output_padding[0], ct.groups
        n, cin, length = x.shape
        xd = x.new_zeros(n, cin, (length - 1) * s + 1)
        xd[:, :, ::s] = x
        xd = F.pad(xd, (k - 1 - p, k - 1 - p + op))
        ig, og = cin // g, ct.out_channels // g
        w = ct.weight.view(g, ig, og, k).transpose(1, 2).reshape(g * og, ig, k)
        return F.conv1d(xd, w, ct.bias, groups=g)
