import torch
import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, kernel_size, stride, padding, dilation):
        super().__init__()
        self.k, self.s, self.p, self.d = kernel_size, stride, padding, dilation

    def forward(self, x):
        L = x.shape[-1]
        out_len = (L + 2 * self.p - self.d * (self.k - 1) - 1) // self.s + 1
        xp = F.pad(x, (self.p, self.p), value=-float("inf"))
        idx = torch.arange(out_len).unsqueeze(1) * self.s + torch.arange(self.k).unsqueeze(0) * self.d
        idx[-1] = idx[-1] - 1  # bug: last window shifted left by one
        return xp[..., idx].amax(-1)
