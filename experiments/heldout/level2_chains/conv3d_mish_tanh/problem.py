import torch
import torch.nn as nn


class Model(nn.Module):
    """
    3D convolution, Mish, Tanh.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0):
        super(Model, self).__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        x = self.conv(x)
        x = torch.nn.functional.mish(x)
        x = torch.tanh(x)
        return x


batch_size = 2
in_channels = 3
out_channels = 8
D, H, W = 8, 24, 24
kernel_size = 3


def get_inputs():
    return [torch.randn(batch_size, in_channels, D, H, W)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
