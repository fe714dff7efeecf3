# Correct: the Linear's weight kept transposed (Wᵀ, a buffer), used as x @ Wᵀ + b; equal up to fp32 rounding.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        linear = nn.Linear(in_features, out_features)
        self.register_buffer("weight_t", linear.weight.detach().t().contiguous())
        self.register_buffer("bias", linear.bias.detach().clone())

    def forward(self, x):
        return torch.nn.functional.gelu(torch.matmul(x, self.weight_t) + self.bias)
