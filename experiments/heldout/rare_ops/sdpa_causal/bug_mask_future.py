import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, q, k, v):
        s, d = q.shape[-2], q.shape[-1]
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d)
        keep = torch.tril(torch.ones(s, s, dtype=torch.bool, device=q.device), diagonal=1)
        scores = scores.masked_fill(~keep, float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)
