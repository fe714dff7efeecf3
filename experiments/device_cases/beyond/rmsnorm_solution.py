"""RMS normalisation in a kernel with one thread per (batch item, position): the 64 channels' squares as an fmaf
chain, sqrtf of their mean plus eps, then each channel divided by it.

Expected: ``accumulation_order``, explained. A 64-term sum errs by a few units of u·Σx² in any order, within the
plain floor; sqrtf and the division round correctly, as torch's do.
"""

from _beyond_kernels import kernels
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, num_features, eps):
        super().__init__()
        self.eps = eps
        self.kernels = kernels()

    def forward(self, x):
        return self.kernels.rmsnorm_dim1(x, self.eps)
