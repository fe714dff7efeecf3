import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_f, out_f, p):
        super().__init__()
        self.matmul = nn.Linear(in_f, out_f)
        self.dropout = nn.Dropout(p)

    def forward(self, x):
        x = self.matmul(x)
        x = self.dropout(x)
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return [256, 128, 0.0]
