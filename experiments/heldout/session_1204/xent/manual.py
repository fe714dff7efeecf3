import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, p, t):
        m = p.max(1, keepdim=True).values
        lse = m.squeeze(1) + torch.log(torch.exp(p - m).sum(1))
        return (lse - p.gather(1, t.unsqueeze(1)).squeeze(1)).mean()
