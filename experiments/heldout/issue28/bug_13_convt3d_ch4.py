# Bug: everything right, then output channel 4 is multiplied by (1 + 5e-5) after the sigmoid.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding
        )

    def forward(self, x):
        y = torch.sigmoid(torch.softmax(self.conv_transpose(x), dim=1))
        factor = torch.ones(1, y.shape[1], 1, 1, 1, dtype=y.dtype)
        factor[0, 4] = 1.0 + 5e-5
        return y * factor
