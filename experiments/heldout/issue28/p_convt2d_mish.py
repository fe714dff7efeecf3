# Reference: ConvTranspose2d (16→8, kernel 4, stride 2, padding 1) then Mish, fp32.
import torch
from torch import nn

batch_size = 4
in_channels = 16
out_channels = 8
height = width = 12
kernel_size = 4
stride = 2
padding = 1


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return torch.nn.functional.mish(self.conv_transpose(x))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
