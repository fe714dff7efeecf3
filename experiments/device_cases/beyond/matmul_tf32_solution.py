"""The matrix product on the tensor cores in TF32 (wmma, precision::tf32, m16n16k8): each operand rounded to 10
mantissa bits by __float_to_tf32 (ties away from zero), products accumulated in fp32.

Expected: ``candidate_tf32`` named, explained. The reference is cuBLAS in fp32 (torch's default for matmul). TF32
operands move each output by about 2^-12·√(2K/3)·rms(a·b), some 140 units of the floor's u·Σ|a·b| at K = 1024 —
past plain fp32 — while the TF32 re-creation (operands rounded, exact sum) leaves only the fp32 accumulation and the
rare ties that round the other way (within its floor plus the tensor cores' K/8 allowance). fp16 operands round alike
inside fp16's range (the evidence says so); TF32 is named.
"""

from _beyond_kernels import kernels
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.kernels = kernels()

    def forward(self, A, B):
        return self.kernels.matmul_tf32(A, B)
