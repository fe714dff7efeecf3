"""MSE in a kernel of one block: each of 256 threads an fmaf chain of (p − t)² over every 256th of the 524288 values,
then a shared-memory tree, divided by the count (a power of two: exact).

Expected: ``accumulation_order`` or ``identical``, explained. Chains of 2048 positive terms err by ~u·√(2048/3)
relative each, averaging out over 256 threads, and the tree adds a few units: within the plain floor of the mean's
u·mean|x|. One scalar output may also come out bitwise equal to torch's.
"""

from _beyond_kernels import kernels
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.kernels = kernels()

    def forward(self, predictions, targets):
        return self.kernels.mse(predictions, targets)
