import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        y = torch.matmul(A, B)
        y[:, -1, :] *= 1 + 2e-5
        return y
