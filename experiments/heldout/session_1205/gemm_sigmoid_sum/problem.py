import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear, scaled, sigmoid, summed over the features."""

    def __init__(self, input_size, hidden_size, scale):
        super().__init__()
        self.linear = nn.Linear(input_size, hidden_size)
        self.scale = scale

    def forward(self, x):
        x = self.linear(x) * self.scale
        x = torch.sigmoid(x)
        return torch.sum(x, dim=1, keepdim=True)


batch_size = 256
input_size = 512
hidden_size = 1024


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, 1.5]
