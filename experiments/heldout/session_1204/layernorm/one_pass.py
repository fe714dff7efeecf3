import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x):
        xf = x.reshape(x.shape[0], -1)
        n = xf.shape[1]
        mu = xf.sum(1, keepdim=True) / n
        var = (xf * xf).sum(1, keepdim=True) / n - mu * mu
        y = (xf - mu) / torch.sqrt(var + self.ln.eps)
        return y.reshape(x.shape) * self.ln.weight + self.ln.bias
