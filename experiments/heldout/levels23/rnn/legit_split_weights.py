import torch
import torch.nn as nn

batch_size = 8
input_size = 32
hidden_size = 32
output_size = 16


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.output_size = output_size
        self.hidden = torch.randn((batch_size, hidden_size))
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.tanh = nn.Tanh()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.hidden = self.hidden.to(x.device)
        w = self.i2h.weight
        pre = self.hidden @ w[:, self.input_size :].t() + self.i2h.bias
        pre = pre + x @ w[:, : self.input_size].t()
        self.hidden = torch.tanh(pre)
        output = self.h2o(self.hidden)
        return output


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
