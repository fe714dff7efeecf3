import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """
    Split-K GEMM (two K halves accumulated separately, then summed) and a fused epilogue
    y + s * sigmoid(y) with sigmoid(y) = 0.5 + 0.5 * tanh(y / 2).
    """

    def __init__(self, input_size, hidden_size, scaling_factor):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(input_size, hidden_size)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        w = self.gemm.weight
        k = x.shape[1] // 2
        y = x[:, :k] @ w[:, :k].t()
        y = y + x[:, k:] @ w[:, k:].t()
        y = y + self.gemm.bias
        s = self.scaling_factor
        return y + (0.5 * s) * (1.0 + torch.tanh(0.5 * y))
