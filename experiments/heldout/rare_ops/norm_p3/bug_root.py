import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x):
        s = x.abs().pow(3).sum(dim=-1, keepdim=True)
        return x / s.pow(0.333)
