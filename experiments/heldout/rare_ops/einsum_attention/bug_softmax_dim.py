import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, q, k, v):
        scale = q.shape[-1] ** -0.5
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) * scale
        p = torch.softmax(scores, dim=-2)
        return torch.einsum("bhqk,bhkd->bhqd", p, v)
