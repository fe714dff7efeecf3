import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        best = x[:, 0, :].clone()
        idx = torch.zeros(x.shape[0], x.shape[2], dtype=torch.long)
        for i in range(1, x.shape[1]):
            m = x[:, i, :] < best
            best = torch.where(m, x[:, i, :], best)
            idx = torch.where(m, torch.full_like(idx, i), idx)
        return idx
