# Bug: head 2's scores are scaled by (1/√12)·(1 + 3e-4) (a wrong temperature for one head); the other heads are right.
import math

import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim)

    def forward(self, x):
        b, s, e = x.shape
        q, k, v = self.qkv(x).split(e, dim=2)
        q = q.reshape(b, s, self.num_heads, self.head_dim).transpose(1, 2)
        k = k.reshape(b, s, self.num_heads, self.head_dim).transpose(1, 2)
        v = v.reshape(b, s, self.num_heads, self.head_dim).transpose(1, 2)
        scale = torch.full((1, self.num_heads, 1, 1), 1.0 / math.sqrt(self.head_dim), dtype=x.dtype)
        scale[0, 2] = scale[0, 2] * (1.0 + 3e-4)
        scores = torch.matmul(q, k.transpose(-2, -1)) * scale
        return torch.matmul(torch.softmax(scores, dim=-1), v)
