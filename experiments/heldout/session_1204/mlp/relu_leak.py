import torch.nn.functional as F
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
        h = x
        lin = [m for m in self.network if isinstance(m, nn.Linear)]
        for i, layer_ in enumerate(lin):
            h = layer_(h)
            if i < len(lin) - 1:
                h = F.leaky_relu(h, 1e-4)  # bug: leaky instead of plain ReLU
        return h
