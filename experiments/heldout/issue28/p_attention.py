# Reference: self-attention core: Linear(48→144) for q, k, v; 4 heads of 12; softmax(q·kᵀ/√12)·v; (b, h, s, d).
import math

import torch
from torch import nn

batch_size = 2
seq_len = 32
embed_dim = 48
num_heads = 4


class Model(nn.Module):
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
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    return [torch.randn(batch_size, seq_len, embed_dim)]


def get_init_inputs():
    return [embed_dim, num_heads]
