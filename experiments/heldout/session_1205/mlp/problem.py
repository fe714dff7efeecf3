import torch
import torch.nn as nn


class Model(nn.Module):
    """A small MLP."""

    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        layers = []
        cur = input_size
        for h in layer_sizes:
            layers.append(nn.Linear(cur, h))
            layers.append(nn.ReLU())
            cur = h
        layers.append(nn.Linear(cur, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


batch_size = 128
input_size = 1024
layer_sizes = [512, 256]
output_size = 16


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, layer_sizes, output_size]
