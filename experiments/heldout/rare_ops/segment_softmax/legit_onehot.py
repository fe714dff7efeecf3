import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, num_segments):
        super(ModelNew, self).__init__()
        self.num_segments = num_segments

    def forward(self, x, seg):
        e = torch.exp(x)
        onehot = F.one_hot(seg, self.num_segments).to(x.dtype)
        sums = torch.einsum("bn,bnm->bm", e, onehot)
        denom = torch.einsum("bm,bnm->bn", sums, onehot)
        return e / denom
