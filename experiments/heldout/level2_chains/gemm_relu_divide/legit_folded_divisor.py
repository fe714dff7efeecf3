import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """ReLU is positively homogeneous, so the division is folded into the weights and bias (d > 0)."""

    def __init__(self, in_features, out_features, divisor):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = divisor

    def forward(self, x):
        inv = 1.0 / self.divisor
        return torch.relu(F.linear(x, self.linear.weight * inv, self.linear.bias * inv))
