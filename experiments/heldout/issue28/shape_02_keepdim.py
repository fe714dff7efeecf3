# Bug: the sum keeps its dim, (16, 1) instead of the reference's (16,) (a missing squeeze); the values are right.
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return self.linear(x).sum(dim=1, keepdim=True)
