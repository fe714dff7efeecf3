"""A correct fp32 kernel for seed 000 that runs on a CPU: PyTorch's own fp32 convolution (oneDNN), for the
full-size explain on a machine without a GPU (the CUDA solution beside it needs one)."""

import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding, dilation):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, dilation=dilation, bias=False)

    def forward(self, x):
        c = self.conv2d
        return F.conv2d(x, c.weight, None, c.stride, c.padding, c.dilation)
