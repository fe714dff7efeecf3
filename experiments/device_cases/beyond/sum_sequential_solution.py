"""The sum in a kernel with one thread per output adding its 4096 terms sequentially, first to last.

Expected: ``accumulation_order``, explained. The terms are positive (torch.rand), so the running sum grows with the
index and a sequential sum errs by about u·√(n/3)·Σ|x| (≈ 37 units of the floor's u·Σ|x| for n = 4096), past the
plain fp32 floor unless torch's own sum errs nearly as much; the engine's ``sequential`` order re-creates it bit for
bit (one fp32 accumulator, ``acc += x[k]``, no product to fuse). Within the plain floor it is the pair's
``accumulation_order`` instead: the same verdict either way.
"""

from _beyond_kernels import kernels
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        if dim != 1:
            raise ValueError(f"Got dim={dim!r}, but the kernel sums over dim 1 only.")
        self.kernels = kernels()

    def forward(self, x):
        return self.kernels.sum_dim1_sequential(x)
