import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.k, self.s, self.p = kernel_size, stride, padding

    def forward(self, x):
        xp = F.pad(x, (self.p, self.p))
        u = xp.unfold(2, self.k, self.s)
        out = u.sum(-1) / self.k
        # bug: first window divides by the count of real elements (count_include_pad=False at the left edge only)
        out[..., 0] = u[..., 0, :].sum(-1) / (self.k - self.p)
        return out
