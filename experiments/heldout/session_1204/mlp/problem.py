import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        layers = []
        cur = input_size
        for s in layer_sizes:
            layers += [nn.Linear(cur, s), nn.ReLU()]
            cur = s
        layers.append(nn.Linear(cur, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


def get_inputs():
    return [torch.randn(32, 512)]


def get_init_inputs():
    return [512, [400, 300], 50]
