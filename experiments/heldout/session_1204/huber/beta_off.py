import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, p, t):
        return F.smooth_l1_loss(p, t, beta=1.002)
