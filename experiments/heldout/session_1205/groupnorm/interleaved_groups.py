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
    """Channel c assigned to group c % G instead of c // (C/G)."""

    def __init__(self, num_features, num_groups):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)
        with torch.no_grad():
            self.gn.weight.copy_(1.0 + 0.1 * torch.randn(num_features))
            self.gn.bias.copy_(0.1 * torch.randn(num_features))

    def forward(self, x):
        N, C, H, W = x.shape
        G = self.gn.num_groups
        v = x.reshape(N, C // G, G, H * W).transpose(1, 2).reshape(N, G, -1)
        mean = v.mean(2)
        var = v.var(2, unbiased=False)
        mean_c = mean.repeat(1, C // G)
        var_c = var.repeat(1, C // G)
        y = (x - mean_c[..., None, None]) / torch.sqrt(var_c[..., None, None] + self.gn.eps)
        return y * self.gn.weight.view(1, C, 1, 1) + self.gn.bias.view(1, C, 1, 1)
