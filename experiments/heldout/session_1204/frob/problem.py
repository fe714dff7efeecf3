import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        norm = torch.norm(x, p="fro")
        return x / norm


def get_inputs():
    return [torch.randn(8, 16, 64, 64)]


def get_init_inputs():
    return []
