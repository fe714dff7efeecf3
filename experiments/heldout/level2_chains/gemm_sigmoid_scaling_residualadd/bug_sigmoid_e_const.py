import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Sigmoid as 1 / (1 + e^-y) with e written as the literal 2.72."""

    def __init__(self, input_size, hidden_size, scaling_factor):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(input_size, hidden_size)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        y = self.gemm(x)
        sig = 1.0 / (1.0 + torch.pow(2.72, -y))
        return y + sig * self.scaling_factor
