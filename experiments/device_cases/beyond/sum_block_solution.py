"""The sum in a kernel with one block of 256 threads per row: each thread adds every 256th term (32 of them), then
the 256 partial sums are halved in a shared-memory tree.

Expected: ``accumulation_order``, explained. Short per-thread chains and an 8-level tree err by a few units of
u·Σ|x|, within the plain fp32 floor (then the pair's ``accumulation_order``); past it the engine's ``threads256``
order re-creates the kernel bit for bit. Bitwise equal to torch's reduction (vectorised loads, several
accumulators a thread, a warp-shuffle tree) at all 128 rows is not to be expected: ``identical`` would be a surprise.
"""

from _beyond_kernels import kernels
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        if dim != 1:
            raise ValueError(f"Got dim={dim!r}, but the kernel sums over the last of two dims only.")
        self.kernels = kernels()

    def forward(self, x):
        return self.kernels.sum_rows_block(x)
