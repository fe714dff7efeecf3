import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, num_segments):
        super(ModelNew, self).__init__()
        self.num_segments = num_segments

    def forward(self, x, seg):
        e = torch.exp(x)
        n = x.shape[1]
        sums = torch.zeros(x.shape[0], self.num_segments, dtype=x.dtype, device=x.device)
        sums = sums.scatter_add(1, seg[:, : n - 1], e[:, : n - 1])
        return e / torch.gather(sums, 1, seg)
