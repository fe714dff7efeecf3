import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers, batch_first=False)

    def forward(self, x, h0):
        out, _hn = self.gru(x, h0)
        return out


def get_inputs():
    return [torch.randn(12, 8, 32), torch.randn(2, 8, 48)]


def get_init_inputs():
    return [32, 48, 2]
