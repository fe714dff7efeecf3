import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """GroupNorm written out: per-group mean, two-pass biased variance, rsqrt, affine; fused swish epilogue."""

    def __init__(self, in_features, out_features, num_groups, multiply_weight_shape):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.multiply_weight = nn.Parameter(torch.randn(multiply_weight_shape))

    def forward(self, x):
        y = self.gemm(x)
        n, c = y.shape
        g = self.group_norm.num_groups
        yg = y.reshape(n, g, c // g)
        mean = yg.mean(dim=-1, keepdim=True)
        d = yg - mean
        var = (d * d).mean(dim=-1, keepdim=True)
        y = (d * torch.rsqrt(var + self.group_norm.eps)).reshape(n, c)
        y = y * self.group_norm.weight + self.group_norm.bias
        y = y / (1.0 + torch.exp(-y))
        y = y * self.multiply_weight
        return y / (1.0 + torch.exp(-y))
