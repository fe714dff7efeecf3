import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_c, out_c, k):
        super().__init__()
        self.conv = nn.Conv2d(in_c, out_c, k, padding=1)
        self.bn = nn.BatchNorm2d(out_c)
        with torch.no_grad():
            self.bn.running_mean.copy_(torch.randn(out_c) * 0.1)
            self.bn.running_var.copy_(torch.rand(out_c) + 0.5)
        self.bn.eval()
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        return self.pool(torch.relu(self.bn(self.conv(x))))


def get_inputs():
    return [torch.randn(8, 16, 32, 32)]


def get_init_inputs():
    return [16, 32, 3]
