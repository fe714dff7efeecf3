# Correct: the 1/√12 score scale folded into the q rows of the qkv weight and bias at init; fp32-equal.
import math

import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        qkv = nn.Linear(embed_dim, 3 * embed_dim)
        scale = torch.ones(3 * embed_dim, 1)
        scale[:embed_dim] = 1.0 / math.sqrt(self.head_dim)
        with torch.no_grad():
            self.weight = nn.Parameter(qkv.weight * scale)
            self.bias = nn.Parameter(qkv.bias * scale.reshape(-1))

    def forward(self, x):
        b, s, e = x.shape
        q, k, v = torch.nn.functional.linear(x, self.weight, self.bias).split(e, dim=2)
        q = q.reshape(b, s, self.num_heads, self.head_dim).transpose(1, 2)
        k = k.reshape(b, s, self.num_heads, self.head_dim).transpose(1, 2)
        v = v.reshape(b, s, self.num_heads, self.head_dim).transpose(1, 2)
        return torch.matmul(torch.softmax(torch.matmul(q, k.transpose(-2, -1)), dim=-1), v)
