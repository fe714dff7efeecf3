import torch
import torch.nn as nn


class Model(nn.Module):
    """A 1-layer LSTM; a Linear head on the last step's output."""

    def __init__(self, input_size, hidden_size, num_layers, output_size):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1, :])


batch_size = 16
sequence_length = 64
input_size = 32
hidden_size = 64
num_layers = 1
output_size = 10


def get_inputs():
    return [torch.randn(batch_size, sequence_length, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size]
