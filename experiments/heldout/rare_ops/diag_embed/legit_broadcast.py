import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, a, d):
        # A diag(d) scales the columns of A; one matmul instead of two
        return torch.matmul(a * d[:, None, :], a.transpose(-1, -2))
