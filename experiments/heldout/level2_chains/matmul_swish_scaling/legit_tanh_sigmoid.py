import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """addmm then a fused epilogue with sigmoid(x) = 0.5 * (1 + tanh(x / 2)) and the scale folded in."""

    def __init__(self, in_features, out_features, scaling_factor):
        super(ModelNew, self).__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        y = torch.addmm(self.matmul.bias, x, self.matmul.weight.t())
        half_scale = 0.5 * self.scaling_factor
        return y * (half_scale + half_scale * torch.tanh(0.5 * y))
