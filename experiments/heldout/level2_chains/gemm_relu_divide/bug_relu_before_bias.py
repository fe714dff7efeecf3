import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Epilogue order swapped: ReLU applied to the accumulator, bias added afterwards."""

    def __init__(self, in_features, out_features, divisor):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = divisor

    def forward(self, x):
        acc = x @ self.linear.weight.t()
        return (torch.relu(acc) + self.linear.bias) / self.divisor
