import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, a, d):
        n = a.shape[-1]
        return torch.matmul(a[..., : n - 1] * d[:, None, : n - 1], a[..., : n - 1].transpose(-1, -2))
