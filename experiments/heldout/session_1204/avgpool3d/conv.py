import torch
import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.k, self.s, self.p = kernel_size, stride, padding

    def forward(self, x):
        N, C = x.shape[:2]
        w = torch.full((1, 1, self.k, self.k, self.k), 1.0 / self.k**3)
        y = F.conv3d(x.reshape(N * C, 1, *x.shape[2:]), w, stride=self.s, padding=self.p)
        return y.reshape(N, C, *y.shape[2:])
