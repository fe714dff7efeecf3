import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding, dilation):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size, stride, padding, dilation)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(16, 64, 130) * 1e-3]


def get_init_inputs():
    return [4, 2, 2, 3]
