"""LayerNorm in a kernel with one block per row, computed correctly: the mean as a block tree, then Σ(x − mean)² as a
block tree (two passes), rsqrtf, and the affine weight and bias.

Expected: ``accumulation_order`` or ``identical``, explained. On zero-mean inputs the two-pass statistics are
accurate in any order (the mean's error is a tiny fraction of the floor's u·mean|x|), and rsqrtf's 2 ulp are within
the floor; bitwise equality with torch's Welford kernel at all 1 M outputs is unlikely, so ``accumulation_order``.
"""

from _beyond_kernels import kernels
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)
        self.kernels = kernels()

    def forward(self, x):
        return self.kernels.layernorm_two_pass(x, self.ln.weight, self.ln.bias, self.ln.eps)
