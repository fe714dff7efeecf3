import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """Bias loaded per channel with a mask that skips channel 3."""

    def __init__(self, in_channels, out_channels, kernel_size, pool_kernel_size):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.pool1 = nn.MaxPool3d(pool_kernel_size)
        self.pool2 = nn.MaxPool3d(pool_kernel_size)

    def forward(self, x):
        b = self.conv.bias.clone()
        b[3] = 0.0
        x = F.conv3d(x, self.conv.weight) + b.view(1, -1, 1, 1, 1)
        x = torch.softmax(x, dim=1)
        return self.pool2(self.pool1(x))
