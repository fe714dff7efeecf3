"""GELU in a kernel as its tanh approximation, 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), with tanhf.

Expected: ``gelu_approximation`` on the candidate, explained. The two forms differ by up to 4.7e-4 (at |x| ≈ 2.7),
thousands of units of the floor; the engine's other GELU form re-creates the kernel to within its fp32 rounding
(u·(|y| + |x|) for an x·g(x) activation).
"""

from _beyond_kernels import kernels
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.kernels = kernels()

    def forward(self, x):
        return self.kernels.gelu_tanh(x)
