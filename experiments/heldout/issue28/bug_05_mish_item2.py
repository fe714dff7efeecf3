# Bug: everything right, then batch item 2 is multiplied by (1 + 5e-5).
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        y = torch.nn.functional.mish(self.conv_transpose(x))
        factor = torch.ones(y.shape[0], 1, 1, 1, dtype=y.dtype)
        factor[2] = 1.0 + 5e-5
        return y * factor
