"""ModelNew for experiments/device_cases/beyond/cumsum_problem.py in torch: the running sum added one column at a time
(fp32 adds in sequence, the bits of a thread-per-row sequential kernel), for profiling `fpa explain` on the GPU
without building a CUDA extension (experiments/profile_explain.py)."""

import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x = x.movedim(self.dim, -1)
        out = torch.empty_like(x)
        out[..., 0] = x[..., 0]
        for j in range(1, x.shape[-1]):
            out[..., j] = out[..., j - 1] + x[..., j]
        return out.movedim(-1, self.dim)
