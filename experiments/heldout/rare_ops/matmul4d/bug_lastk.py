import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x, w):
        d = x.shape[-1]
        return torch.matmul(x[..., : d - 1], w[: d - 1])
