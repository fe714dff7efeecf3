# Reference: Conv2d (8→16, 3×3, padding 1), eval-mode BatchNorm2d (stats and affine drawn at init), tanh.
import torch
from torch import nn

batch_size = 4
in_channels = 8
out_channels = 16
height = width = 16
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.bn = nn.BatchNorm2d(out_channels)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.2, 0.2)
            self.bn.running_var.uniform_(0.5, 1.5)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.3, 0.3)
        self.bn.eval()

    def forward(self, x):
        return torch.tanh(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
