import torch
import torch.nn as nn


class Model(nn.Module):
    """A 2-layer GRU, the output sequence returned (h0 = 0)."""

    def __init__(self, input_size, hidden_size, num_layers=2):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers)

    def forward(self, x):
        output, _h_n = self.gru(x)
        return output


seq_len = 32
batch_size = 16
input_size = 32
hidden_size = 64


def get_inputs():
    return [torch.randn(seq_len, batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, 2]
