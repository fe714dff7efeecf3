import math

import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)
        self.h = num_heads

    def forward(self, x):
        B, L, E = x.shape
        qkv = x @ self.attn.in_proj_weight.t() + self.attn.in_proj_bias
        q, k, v = qkv.chunk(3, dim=-1)
        d = E // self.h
        q = q.reshape(B, L, self.h, d).transpose(1, 2)
        k = k.reshape(B, L, self.h, d).transpose(1, 2)
        v = v.reshape(B, L, self.h, d).transpose(1, 2)
        s = (q @ k.transpose(-1, -2)) / math.sqrt(d)
        p = torch.softmax(s, dim=-1)
        o = (p @ v).transpose(1, 2).reshape(B, L, E)
        return o @ self.attn.out_proj.weight.t() + self.attn.out_proj.bias
