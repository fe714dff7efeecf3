"""Triplet margin loss in a kernel that takes the distances without pairwise_distance's eps: ‖a − p‖ for
‖a − p + eps‖ (each row's two sums of squares as block trees, then a one-block mean over rows).

Expected: ``bug`` (exit 1). Dropping eps = 1e-6 is a different function, not a rounding: on these inputs (see the
problem) it moves the loss by ~1.1e-4 (measured on the CPU: 1.11e-4), while the loss's fp32 floor is of order
u·|loss| ≈ 6e-8 — thousands of units. (The check at atol = rtol = 1e-4 may pass it: a false pass.) With the eps
added the CPU analogue of this kernel is ``identical``.
"""

from _beyond_kernels import kernels
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.margin = margin
        self.kernels = kernels()

    def forward(self, anchor, positive, negative):
        return self.kernels.triplet_no_eps(anchor, positive, negative, self.margin)
