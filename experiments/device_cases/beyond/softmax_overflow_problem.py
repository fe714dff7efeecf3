"""Softmax over dim 1 of (128, 16384) values of standard deviation 50 in KernelBench's format: every row has values
past 88.7, where exp overflows fp32 (the max shift in torch's softmax keeps it finite).

Run with softmax_solution.py (exp(x) / Σ exp(x) without the shift). Expected: ``bug`` or ``nonfinite``, exit 1: the
candidate is NaN at the ~4 % of outputs whose x overflows (inf / inf) where the Model's values are finite, which no
tolerance admits. The engine's ``softmax_unshifted`` formula gives those NaN too, so it may call this ``formula``
(exit 0): on the CPU it does, with a residual of 0 units (NaN equal to NaN) and "catastrophic: every bit lost".
"""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(128, 16384) * 50]


def get_init_inputs():
    return []
