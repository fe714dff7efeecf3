from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, p, t):
        d = (p - t) ** 2
        return d.sum() / (d.numel() + 1)
