"""Softmax in a kernel with one block per row, as exp(x) / Σ exp(x) without subtracting the row's max (the
denominator a block tree).

Expected here: ``accumulation_order`` or ``formula``, explained. On standard-normal inputs (|x| < ~6) nothing
overflows, and the unshifted form is as accurate as the shifted one (expf of an exact argument, where the shift
rounds x − max first): within the plain floor, so most likely the pair's ``accumulation_order``.

The same solution is run against softmax_overflow_problem.py, whose inputs are 50 times larger: there expf
overflows to inf past x ≈ 88.7, and inf / inf gives NaN where the Model's values are finite (see that problem).
"""

from _beyond_kernels import kernels
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.kernels = kernels()

    def forward(self, x):
        return self.kernels.softmax_unshifted(x)
