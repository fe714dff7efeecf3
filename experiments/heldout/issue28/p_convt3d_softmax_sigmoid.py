# Reference: ConvTranspose3d (8→8, k 3, stride 2, padding 1, output_padding 1), softmax over channels, sigmoid.
import torch
from torch import nn

batch_size = 2
in_channels = 8
out_channels = 8
depth, height, width = 4, 6, 6
kernel_size = 3
stride = 2
padding = 1
output_padding = 1


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding
        )

    def forward(self, x):
        return torch.sigmoid(torch.softmax(self.conv_transpose(x), dim=1))


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding]
