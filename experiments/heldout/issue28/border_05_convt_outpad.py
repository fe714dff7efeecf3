# Bug: run without output_padding, the missing last row and column filled with the bias alone (contributions lost).
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding
        )
        self.stride, self.padding = stride, padding

    def forward(self, x):
        w, b = self.conv_transpose.weight, self.conv_transpose.bias
        y = torch.nn.functional.conv_transpose2d(x, w, None, stride=self.stride, padding=self.padding)
        y = torch.nn.functional.pad(y, (0, 1, 0, 1)) + b.reshape(1, -1, 1, 1)
        return torch.tanh(y)
