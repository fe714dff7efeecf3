import torch
from torch import nn


def tf32(x):
    """Round an fp32 tensor's mantissa to TF32's 10 fraction bits (to nearest, ties to even)."""
    i = x.contiguous().view(torch.int32)
    r = (i + 0xFFF + ((i >> 13) & 1)) & -8192
    return r.view(torch.float32)


def bf16(x):
    return x.to(torch.bfloat16).float()


def fp16(x):
    return x.half().float()


def seq_sum(x, dim):
    """One thread per output, adding the terms in order in fp32."""
    x = x.movedim(dim, 0)
    acc = torch.zeros_like(x[0])
    for t in x:
        acc = acc + t
    return acc


def pairwise_sum(x, dim):
    """A halving tree."""
    x = x.movedim(dim, -1)
    while x.shape[-1] > 1:
        n = x.shape[-1]
        h = n // 2
        if n % 2:
            x = torch.cat([x[..., :h] + x[..., h : 2 * h], x[..., 2 * h :]], -1)
        else:
            x = x[..., :h] + x[..., h:]
    return x[..., 0]


def kahan_sum(x, dim):
    x = x.movedim(dim, 0)
    s = torch.zeros_like(x[0])
    c = torch.zeros_like(x[0])
    for t in x:
        y = t - c
        u = s + y
        c = (u - s) - y
        s = u
    return s


def blocked_sum(x, dim, bs):
    """Per-block partial sums (a thread block each), then the partials added."""
    x = x.movedim(dim, -1)
    n = x.shape[-1]
    assert n % bs == 0
    return x.reshape(*x.shape[:-1], n // bs, bs).sum(-1).sum(-1)


class ModelNew(nn.Module):
    """scale = w * rsqrt(var + eps), shift = b - mean * scale; y = x * scale + shift."""

    def __init__(self, num_features):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.5 * torch.randn(num_features))
            self.bn.running_var.copy_(0.5 + torch.rand(num_features))
            self.bn.weight.copy_(1.0 + 0.1 * torch.randn(num_features))
            self.bn.bias.copy_(0.1 * torch.randn(num_features))

    def forward(self, x):
        scale = self.bn.weight * torch.rsqrt(self.bn.running_var + self.bn.eps)
        shift = self.bn.bias - self.bn.running_mean * scale
        return x * scale.view(1, -1, 1, 1) + shift.view(1, -1, 1, 1)
