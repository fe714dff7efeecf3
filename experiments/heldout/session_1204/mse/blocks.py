from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, p, t):
        d = (p - t) ** 2
        return d.reshape(-1, 1024).sum(1).sum() / d.numel()
