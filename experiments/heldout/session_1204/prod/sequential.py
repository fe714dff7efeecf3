from torch import nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        acc = x[:, 0, :].clone()
        for i in range(1, x.shape[1]):
            acc = acc * x[:, i, :]
        return acc
