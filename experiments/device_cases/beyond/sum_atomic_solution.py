"""The sum in a kernel where each block of 256 threads sums 256 terms as a tree and adds that partial to its row's
output with atomicAdd: 128 blocks a row, whose partials are added in the order the blocks arrive.

Expected: explained (exit 0), with ``nondeterministic`` beside ``accumulation_order``. The arrival order changes from
run to run, so the candidate run twice on the same inputs differs at some rows by an ulp or so; each run is an fp32
order of the same terms — within the plain floor (its 128 atomic additions err by about u·√(128/3)·Σ|x|, ~5 units),
or else within the any-order allowance (no named order re-creates an arrival order). Should the atomics happen to
arrive alike on both runs, the verdict is ``accumulation_order`` alone: the check accepts either.
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
        return self.kernels.sum_rows_atomic(x)
