import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """
    Bias added after the max (legal), but the bias loop starts at column 1: column 0 gets no bias.
    """

    def __init__(self, in_features, out_features, max_dim):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.max_dim = max_dim

    def forward(self, x):
        acc = x @ self.gemm.weight.t()
        m = acc.amax(dim=self.max_dim, keepdim=True)
        bias = torch.cat([torch.zeros_like(self.gemm.bias[:1]), self.gemm.bias[1:]])
        m = m + bias
        m = m - m.mean(dim=1, keepdim=True)
        return F.gelu(m)
