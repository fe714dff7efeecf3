# Reference: ConvTranspose2d (8→8, kernel 3, stride 2, padding 1, output_padding 1) then tanh, fp32.
import torch
from torch import nn

batch_size = 2
in_channels = 8
out_channels = 8
height = width = 12
kernel_size = 3
stride = 2
padding = 1
output_padding = 1


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding
        )

    def forward(self, x):
        return torch.tanh(self.conv_transpose(x))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding]
