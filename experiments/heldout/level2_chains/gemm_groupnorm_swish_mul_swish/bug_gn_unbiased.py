import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Hand-written GroupNorm using the unbiased (n - 1) group variance."""

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
        var = yg.var(dim=-1, keepdim=True)
        y = ((yg - mean) / torch.sqrt(var + self.group_norm.eps)).reshape(n, c)
        y = y * self.group_norm.weight + self.group_norm.bias
        y = y * torch.sigmoid(y)
        y = y * self.multiply_weight
        return y * torch.sigmoid(y)
