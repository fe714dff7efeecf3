import torch
import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, p, t):
        c = F.cosine_similarity(p, t, dim=1)
        # bug: the last row's similarity is scaled by 1.05
        c = torch.cat((c[:-1], c[-1:] * 1.05))
        return torch.mean(1 - c)
