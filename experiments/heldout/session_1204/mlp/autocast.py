import torch
from torch import nn


class ModelNew(nn.Module):
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
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.network(x)
        return y.float()
