"""BatchNorm in a kernel that normalises with the running statistics (mean 0, variance 1 as built), as eval mode
would, while the Model is in training mode and uses each batch's own.

Expected: ``bug`` (exit 1). The inputs are torch.rand, whose batch mean is 0.5 and standard deviation 0.29, so the
kernel returns about x where the Model returns (x − 0.5) / 0.29: off by up to ~1.7 at every output, far beyond any
rounding. The weight and bias are the Model's (the same seed builds both), so no parameter differs; the running
statistics are buffers, which the reference updates in forward and the kernel only reads.
"""

from _beyond_kernels import kernels
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features)
        self.kernels = kernels()

    def forward(self, x):
        bn = self.bn
        return self.kernels.batchnorm_running(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, bn.eps)
