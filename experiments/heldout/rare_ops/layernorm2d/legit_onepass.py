import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, h, w, eps):
        super(ModelNew, self).__init__()
        self.ln = nn.LayerNorm([h, w], eps=eps)
        nn.init.normal_(self.ln.weight, 1.0, 0.2)
        nn.init.normal_(self.ln.bias, 0.0, 0.2)

    def forward(self, x):
        # one pass: mean and mean of squares, var = E[x^2] - E[x]^2
        mean = x.mean(dim=(-2, -1), keepdim=True)
        msq = (x * x).mean(dim=(-2, -1), keepdim=True)
        var = msq - mean * mean
        return (x - mean) * torch.rsqrt(var + self.ln.eps) * self.ln.weight + self.ln.bias
