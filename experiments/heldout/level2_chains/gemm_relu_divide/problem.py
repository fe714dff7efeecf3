import torch
import torch.nn as nn


class Model(nn.Module):
    """
    GEMM, ReLU, division by a constant.
    """

    def __init__(self, in_features, out_features, divisor):
        super(Model, self).__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = divisor

    def forward(self, x):
        x = self.linear(x)
        x = torch.relu(x)
        x = x / self.divisor
        return x


batch_size = 16
in_features = 512
out_features = 256
divisor = 3.0


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, divisor]
