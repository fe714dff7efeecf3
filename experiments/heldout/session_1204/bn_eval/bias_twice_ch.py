import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.bn = nn.BatchNorm2d(c)
        with torch.no_grad():
            self.bn.running_mean.copy_(torch.randn(c) * 2)
            self.bn.running_var.copy_(torch.rand(c) * 3 + 0.1)
            self.bn.weight.copy_(torch.randn(c))
            self.bn.bias.copy_(torch.randn(c))
        self.bn.eval()

    def forward(self, x):
        y = self.bn(x)
        y[:, 5] += self.bn.bias[5] * 1e-4
        return y
