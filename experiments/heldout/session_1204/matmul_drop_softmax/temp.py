import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_f, out_f, p):
        super().__init__()
        self.matmul = nn.Linear(in_f, out_f)

    def forward(self, x):
        # bug: softmax temperature 1.0005
        return torch.softmax(self.matmul(x) / 1.0005, dim=1)
