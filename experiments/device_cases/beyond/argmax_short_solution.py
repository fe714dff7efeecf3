"""Argmax in a kernel whose loop stops one value short (``k < n - 1``): the last of the 256 values is never read.

Run against argmax_problem.py. Expected: ``bug`` (exit 1). Wherever the maximum is the last value (1 output in 256,
~16 of the 4096 outputs a trial) the kernel picks the second largest, which is a standard-normal gap away from the
maximum, not a tie within the fp32 floor (the input itself has no rounding): a wrong pick, located.
"""

from _beyond_kernels import kernels
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        if dim != 1:
            raise ValueError(f"Got dim={dim!r}, but the kernel scans dim 1 only.")
        self.kernels = kernels()

    def forward(self, x):
        return self.kernels.argmax_dim1_short(x)
