import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Training-mode BatchNorm written by hand with the unbiased (n - 1) batch variance."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, bias=True):
        super(ModelNew, self).__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=bias
        )
        self.batch_norm = nn.BatchNorm3d(out_channels)

    def forward(self, x):
        y = self.conv_transpose(x)
        bn = self.batch_norm
        if self.training:
            mean = y.mean(dim=(0, 2, 3, 4), keepdim=True)
            var = y.var(dim=(0, 2, 3, 4), keepdim=True)
        else:
            mean = bn.running_mean.view(1, -1, 1, 1, 1)
            var = bn.running_var.view(1, -1, 1, 1, 1)
        y = (y - mean) / torch.sqrt(var + bn.eps) * bn.weight.view(1, -1, 1, 1, 1) + bn.bias.view(1, -1, 1, 1, 1)
        return y - y.mean(dim=(2, 3, 4), keepdim=True)
