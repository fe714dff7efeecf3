import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A strided, dilated 1D convolution with zero padding.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation):
        super(Model, self).__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x):
        return self.conv(x)


batch_size = 8
in_channels = 32
out_channels = 48
length = 200
kernel_size = 7
stride = 2
padding = 4
dilation = 3


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation]
