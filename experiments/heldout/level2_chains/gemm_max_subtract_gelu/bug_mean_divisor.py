import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """Row mean computed as sum / (n - 1) instead of sum / n."""

    def __init__(self, in_features, out_features, max_dim):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.max_dim = max_dim

    def forward(self, x):
        x = self.gemm(x)
        x = torch.max(x, dim=self.max_dim, keepdim=True).values
        n = x.shape[1]
        x = x - x.sum(dim=1, keepdim=True) / (n - 1)
        return F.gelu(x)
