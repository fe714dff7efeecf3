"""The matrix product in a naive kernel: one thread per output, a sequential fmaf chain over all 131072 products.

Expected: ``accumulation_order``, explained: the kernel is plain fp32 in another order. With positive terms
(torch.rand) the chain's running sum grows with k and it errs by about u·√(K/3)·Σ|a·b| (~200 units of the floor's
u·Σ|a·b| at K = 131072), past the plain floor unless cuBLAS's own order errs nearly as much.

Likely outcome: a mismatch, as no rewrite re-creates a matrix product summed in another fp32 order (the order
rewrites act on sums: sum, mean, cumsum). On the CPU with M = N = 16 the candidate is 269 units from plain (floor 60):
at commit 156aa77 the TF32 rewrite, whose floor allows the tensor cores' truncating accumulation (K/8 = 16384
units), holds it, and the verdict is ``candidate_tf32``; with a TF32 fit required to agree at fp32's resolution more
often than plain does (``unlike_reduced``, in progress), it is ``bug`` (144 of 256 outputs beyond the floor).
"""

from _beyond_kernels import kernels
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.kernels = kernels()

    def forward(self, A, B):
        return self.kernels.matmul_naive(A, B)
