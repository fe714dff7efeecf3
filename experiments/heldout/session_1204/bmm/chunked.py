import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        out = torch.zeros(A.shape[0], A.shape[1], B.shape[2])
        for s in range(0, A.shape[2], 32):
            out = out + torch.einsum("bmk,bkn->bmn", A[:, :, s : s + 32], B[:, s : s + 32, :])
        return out
