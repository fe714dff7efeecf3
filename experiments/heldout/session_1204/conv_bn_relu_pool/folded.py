import torch
import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_c, out_c, k):
        super().__init__()
        self.conv = nn.Conv2d(in_c, out_c, k, padding=1)
        self.bn = nn.BatchNorm2d(out_c)
        with torch.no_grad():
            self.bn.running_mean.copy_(torch.randn(out_c) * 0.1)
            self.bn.running_var.copy_(torch.rand(out_c) + 0.5)
        self.bn.eval()

    def forward(self, x):
        s = self.bn.weight / torch.sqrt(self.bn.running_var + self.bn.eps)
        w = self.conv.weight * s.view(-1, 1, 1, 1)
        b = (self.conv.bias - self.bn.running_mean) * s + self.bn.bias
        return F.max_pool2d(torch.relu(F.conv2d(x, w, b, padding=1)), 2)
