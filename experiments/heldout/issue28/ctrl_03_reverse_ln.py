# Correct: LayerNorm by hand, sums in reverse feature order, held affine, then GELU, fp32; another order only.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.ln = nn.LayerNorm(out_features)

    def forward(self, x):
        y = self.gemm(x)
        r = torch.flip(y, dims=[1])
        n = y.shape[1]
        mean = torch.cumsum(r, dim=1)[:, -1:] / n
        var = torch.cumsum((r - mean) ** 2, dim=1)[:, -1:] / n
        z = (y - mean) * torch.rsqrt(var + self.ln.eps) * self.ln.weight + self.ln.bias
        return torch.nn.functional.gelu(z)
