"""Cross-entropy in a kernel of one block: each of 256 threads takes every 256th row — log Σ exp(x − max) + max −
x[target], the ten exponentials summed sequentially — and the rows' losses are added in a shared-memory tree.

Expected: ``accumulation_order`` or ``identical``, explained: the same log-sum-exp with the max shift as torch's
log_softmax, its sums in another order, within the plain floor (on the CPU the analogue is ``accumulation_order``,
0.3 units). One scalar output may come out bitwise equal.
"""

from _beyond_kernels import kernels
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.kernels = kernels()

    def forward(self, predictions, targets):
        return self.kernels.cross_entropy(predictions, targets)
