import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """
    A 3x3 convolution followed by a dilated max pooling with padding and ceil_mode=True.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)
        self.pool = nn.MaxPool2d(kernel_size, stride=stride, padding=padding, dilation=dilation, ceil_mode=True)

    def forward(self, x):
        return self.pool(self.conv(x))


batch_size = 4
in_channels = 16
out_channels = 16
height = 30
width = 30
kernel_size = 3
stride = 2
padding = 1
dilation = 2


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation]
