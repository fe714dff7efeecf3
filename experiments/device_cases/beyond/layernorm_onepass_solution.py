"""LayerNorm with a one-pass variance: E[x] and E[x²] taken in one pass over x with torch's reductions, then a kernel
forms var = E[x²] − E[x]² and normalises.

Expected: ``formula``, explained, its evidence calling the formula catastrophic. With mean 100 and standard deviation
1, E[x²] ≈ 10⁴ and the subtraction cancels about 13 bits: the variance is off by ~1e-3 (an ulp of 10⁴), each output
by about 5e-4·|y|, hundreds of units of the floor (whose σ, ~100 u, comes from the mean's sum; 359 units on the CPU)
— not any order of plain fp32. The engine's ``one_pass_variance`` formula re-creates it: it takes E[x] and E[x²]
with torch's mean in fp32, as this solution does (the same reductions on the same device, bit for bit), and the
kernel rounds every step alone (the _rn intrinsics) in the decomposition's order, rsqrtf as torch's rsqrt.

Why the statistics are not summed in the kernel too: cancellation multiplies any difference in E[x²] by
E[x²]/var ≈ 10⁴, so a kernel summing x² in its own order differs from the formula's re-creation by as much as the
formula differs from fp64, and no single rewrite changes both the formula and the order (on the CPU the engine
calls such a kernel ``accumulation_order`` through the any-order allowance of the mean's sum).
"""

from _beyond_kernels import kernels
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)
        self.kernels = kernels()

    def forward(self, x):
        dims = tuple(range(x.dim() - len(self.ln.normalized_shape), x.dim()))
        mean = x.mean(dims, keepdim=True)
        msq = (x * x).mean(dims, keepdim=True)
        return self.kernels.layernorm_from_moments(x, mean, msq, self.ln.weight, self.ln.bias, self.ln.eps)
