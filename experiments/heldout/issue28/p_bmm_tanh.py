# Reference: batched matrix product of the two inputs (8 × 32×64 · 64×48), scaled, tanh; no parameters, fp32.
import torch
from torch import nn

batch_size = 8
m, k, n = 32, 64, 48
scale = 0.125


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, a, b):
        return torch.tanh(torch.bmm(a, b) * self.scale)


def get_inputs():
    return [torch.randn(batch_size, m, k), torch.randn(batch_size, k, n)]


def get_init_inputs():
    return [scale]
