"""KernelBench level1/94_MSELoss.py's shape: mean((p − t)²), both (32768, 32768) Pareto(0.01, 1.5) inputs."""

import torch
from torch import nn
from torch.distributions import Pareto


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.mean((predictions - targets) ** 2)


batch_size = 32768
input_shape = (32768,)
dim = 1


def get_inputs():
    predictions = Pareto(0.01, 1.5).sample((batch_size, *input_shape))
    targets = Pareto(0.01, 1.5).sample((batch_size, *input_shape))
    return [predictions, targets]


def get_init_inputs():
    return []
