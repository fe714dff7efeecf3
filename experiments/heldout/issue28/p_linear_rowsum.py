# Reference: Linear (256→512) then the sum over the 512 features; output shape (batch,), fp32.
import torch
from torch import nn

batch_size = 16
in_features = 256
out_features = 512


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return self.linear(x).sum(dim=1)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
