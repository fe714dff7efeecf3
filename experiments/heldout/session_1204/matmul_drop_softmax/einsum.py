import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_f, out_f, p):
        super().__init__()
        self.matmul = nn.Linear(in_f, out_f)

    def forward(self, x):
        y = torch.einsum("bi,oi->bo", x, self.matmul.weight) + self.matmul.bias
        e = torch.exp(y - y.max(1, keepdim=True).values)
        return e / e.sum(1, keepdim=True)
