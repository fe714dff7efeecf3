import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Fused activation with 1/6 written as the literal 0.1667."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        x = self.conv(x)
        return torch.relu(x) * torch.clamp(x + 3.0, max=6.0) * 0.1667
