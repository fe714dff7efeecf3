import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A grouped, strided 1D transposed convolution with padding and output_padding.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, groups):
        super(Model, self).__init__()
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
        return self.conv_t(x)


batch_size = 8
in_channels = 64
out_channels = 48
length = 100
kernel_size = 5
stride = 3
padding = 2
output_padding = 1
groups = 4


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, groups]
