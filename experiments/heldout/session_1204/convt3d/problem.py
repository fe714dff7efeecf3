import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, ic, oc, k, stride, padding):
        super().__init__()
        self.ct = nn.ConvTranspose3d(ic, oc, k, stride=stride, padding=padding)

    def forward(self, x):
        return torch.tanh(self.ct(x))


def get_inputs():
    return [torch.randn(2, 8, 6, 6, 6)]


def get_init_inputs():
    return [8, 4, 3, 2, 1]
