import itertools

import torch
import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        layers = []
        for a, b in itertools.pairwise(sizes):
            layers += [nn.Linear(a, b), nn.Tanh()]
        self.net = nn.Sequential(*layers[:-1])

    def forward(self, x):
        lin = [m for m in self.net if isinstance(m, nn.Linear)]
        h = x
        for i, layer_ in enumerate(lin):
            h = F.linear(h.bfloat16().float(), layer_.weight.bfloat16().float(), layer_.bias)
            if i < len(lin) - 1:
                h = torch.tanh(h)
        return h
