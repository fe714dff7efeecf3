import itertools

import torch
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
            h = layer_(h)
            if i < len(lin) - 1:
                h = 2.0 / (1.0 + torch.exp(-2.0 * h)) - 1.0
        return h
