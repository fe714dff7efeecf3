# Correct: Σ_j (x·Wᵀ + b)_j = x·(Σ_j W_j) + Σ_j b_j, with W's column sum and b's sum precomputed; fp32-equal.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        linear = nn.Linear(in_features, out_features)
        with torch.no_grad():
            self.register_buffer("w_sum", linear.weight.sum(dim=0).reshape(-1, 1).clone())
            self.register_buffer("b_sum", linear.bias.sum().reshape(1).clone())

    def forward(self, x):
        return (torch.matmul(x, self.w_sum) + self.b_sum).squeeze(1)
