import torch
import torch.nn as nn


def _id(t):
    return t


class ModelNew(nn.Module):
    """Multi-head self-attention by hand from nn.MultiheadAttention's parameters."""

    def __init__(self, embed_dim, num_heads):
        super(ModelNew, self).__init__()
        self.attn = nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)
        nn.init.uniform_(self.attn.in_proj_bias, -0.1, 0.1)
        nn.init.uniform_(self.attn.out_proj.bias, -0.1, 0.1)

    def forward(self, x):
        r = _id
        a = self.attn
        b, s, e = x.shape
        h = a.num_heads
        hd = e // h
        qkv = torch.matmul(r(x), r(a.in_proj_weight).t()) + a.in_proj_bias
        q, k, v = qkv.chunk(3, dim=-1)
        q, k, v = [t.view(b, s, h, hd).transpose(1, 2) for t in (q, k, v)]
        scores = torch.matmul(r(q), r(k).transpose(-1, -2)) * hd**-0.5
        e_ = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
        p = e_ / e_.sum(dim=-1, keepdim=True)
        o = torch.matmul(r(p), r(v)).transpose(1, 2).reshape(b, s, e)
        return torch.matmul(r(o), r(a.out_proj.weight).t()) + a.out_proj.bias
