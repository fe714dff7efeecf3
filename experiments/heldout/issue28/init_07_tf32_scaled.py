# Wrong parameters: weight ×(1 + 1e-5), fp32; the TF32 reference (K = 320) is a second cause.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=2)
        with torch.no_grad():
            self.conv.weight.mul_(1.0 + 1e-5)

    def forward(self, x):
        return torch.tanh(self.conv(x))
