import torch
import torch.nn as nn


class Model(nn.Module):
    """InstanceNorm2d (no affine)."""

    def __init__(self, num_features: int):
        super().__init__()
        self.inorm = nn.InstanceNorm2d(num_features=num_features)

    def forward(self, x):
        return self.inorm(x)


batch_size = 16
features = 32
dim1 = 64
dim2 = 64


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2) * 2.0 + 0.5]


def get_init_inputs():
    return [features]
