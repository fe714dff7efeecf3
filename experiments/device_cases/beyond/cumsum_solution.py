"""The cumulative sum in a kernel with one thread per row: a running fp32 sum, each prefix the previous plus the next
term (a sequential scan).

Expected: ``accumulation_order``, explained. Over 4000 positive terms the running sum's error grows to about
u·√(k/3)·Σ|x| at position k (~37 units at the end), past the plain floor unless torch's scan (chunks carried
sequentially) errs nearly as much; the engine re-creates a cumsum sequentially, bit for bit (its ``sequential``
order). Within the plain floor it is the pair's ``accumulation_order``: the same verdict.
"""

from _beyond_kernels import kernels
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        if dim != 1:
            raise ValueError(f"Got dim={dim!r}, but the kernel scans the last of two dims only.")
        self.kernels = kernels()

    def forward(self, x):
        return self.kernels.cumsum_rows_sequential(x)
