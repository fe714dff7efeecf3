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
    """One GEMM per batch item."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.stack([A[b] @ B[b] for b in range(A.shape[0])])
