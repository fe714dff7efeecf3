"""A naive transposed-conv kernel (one thread an output, input channel outermost, fmaf), then torch's LeakyReLU."""

import torch.nn.functional as F
from _general_kernels import precise
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, slope):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.slope = slope
        self.kernels = precise()

    def forward(self, x):
        c = self.conv
        y = self.kernels.conv_transpose2d(x, c.weight, c.bias, c.stride[0], c.padding[0], 0)
        return F.leaky_relu(y, self.slope)
