# Wrong parameters: the Linear's weight is the reference's times (1 + 1e-5); the bias is right.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        with torch.no_grad():
            self.gemm.weight.mul_(1.0 + 1e-5)

    def forward(self, x):
        return torch.softmax(self.gemm(x), dim=1)
