import torch
from torch import nn


def suffix(x, d):
    """Sum of the terms at and after each position (a reverse scan)."""
    return torch.cumsum(x.flip(d), d).flip(d)


def blocked_scan(x, d, bs=256):
    """A thread block's scan: each block of bs scanned, then the blocks' totals scanned and added as carries."""
    x = x.movedim(d, -1)
    n = x.shape[-1]
    pad = (-n) % bs
    xp = torch.cat([x, x.new_zeros(*x.shape[:-1], pad)], -1) if pad else x
    b = xp.reshape(*x.shape[:-1], -1, bs)
    inner = torch.cumsum(b, -1)
    carry = torch.cumsum(inner[..., -1], -1) - inner[..., -1]
    out = (inner + carry.unsqueeze(-1)).reshape(*x.shape[:-1], -1)[..., :n]
    return out.movedim(-1, d)


def pairwise_sum(x, d):
    x = x.movedim(d, -1)
    while x.shape[-1] > 1:
        n = x.shape[-1]
        h = n // 2
        if n % 2:
            x = torch.cat([x[..., :h] + x[..., h : 2 * h], x[..., 2 * h :]], -1)
        else:
            x = x[..., :h] + x[..., h:]
    return x


def kahan_sum(x, d):
    x = x.movedim(d, 0)
    s = torch.zeros_like(x[0])
    c = torch.zeros_like(x[0])
    for t in x:
        y = t - c
        u = s + y
        c = (u - s) - y
        s = u
    return s.unsqueeze(-1)


def bump(shape, device, step=97):
    """A deterministic pseudo-random sign pattern in [-1, 1] (a function of position only)."""
    i = torch.arange(shape[0] * shape[1], device=device, dtype=torch.float64).reshape(shape)
    return torch.sin(i * 12.9898 + 78.233).float()


class ModelNew(nn.Module):
    """total - prefix + x"""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        d = self.dim
        out = x.sum(d, keepdim=True) - torch.cumsum(x, d) + x
        return out
