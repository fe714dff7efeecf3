from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, p, t):
        d = (p - t).flatten()
        return (d[:-1] ** 2).sum() / d.numel()
