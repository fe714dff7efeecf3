import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """
    Matrix multiplication (Linear), Swish activation, scaling.
    """

    def __init__(self, in_features, out_features, scaling_factor):
        super(ModelNew, self).__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.matmul(x)
        x = x * torch.sigmoid(x)
        x = x * self.scaling_factor
        return x
