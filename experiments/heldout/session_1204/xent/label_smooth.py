import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, p, t):
        return F.cross_entropy(p, t, label_smoothing=1e-4)
