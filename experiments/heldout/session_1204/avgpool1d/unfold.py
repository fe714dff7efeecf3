import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.k, self.s, self.p = kernel_size, stride, padding

    def forward(self, x):
        xp = F.pad(x, (self.p, self.p))
        u = xp.unfold(2, self.k, self.s)
        acc = u[..., 0]
        for i in range(1, self.k):
            acc = acc + u[..., i]
        return acc / self.k
