# Wrong parameters: three Linear(48→48) for q, k, v draw other weights than the reference's one Linear(48→144).
import math

import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.q = nn.Linear(embed_dim, embed_dim)
        self.k = nn.Linear(embed_dim, embed_dim)
        self.v = nn.Linear(embed_dim, embed_dim)

    def forward(self, x):
        b, s, _ = x.shape
        q = self.q(x).reshape(b, s, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.k(x).reshape(b, s, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.v(x).reshape(b, s, self.num_heads, self.head_dim).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        return torch.matmul(torch.softmax(scores, dim=-1), v)
