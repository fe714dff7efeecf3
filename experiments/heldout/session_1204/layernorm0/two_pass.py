import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x):
        xf = x.reshape(x.shape[0], -1)
        mu = xf.sum(1, keepdim=True) / xf.shape[1]
        d = xf - mu
        var = (d * d).sum(1, keepdim=True) / xf.shape[1]
        y = d * torch.rsqrt(var + self.ln.eps)
        return y.reshape(x.shape) * self.ln.weight + self.ln.bias
