import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Residual taken from the accumulator before the bias add (the sigmoid sees the biased value)."""

    def __init__(self, input_size, hidden_size, scaling_factor):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(input_size, hidden_size)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        acc = x @ self.gemm.weight.t()
        y = acc + self.gemm.bias
        return acc + torch.sigmoid(y) * self.scaling_factor
