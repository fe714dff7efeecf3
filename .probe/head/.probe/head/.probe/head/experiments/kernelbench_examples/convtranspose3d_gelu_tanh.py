"""A fused-epilogue candidate as kernel authors write them: the conv left to cuDNN, the GELU in its tanh form."""

import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, output_padding, num_groups):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, output_padding=output_padding
        )
        self.norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        y = self.norm(self.conv_transpose(x))
        return 0.5 * y * (1 + torch.tanh(0.7978845608028654 * (y + 0.044715 * y**3)))
