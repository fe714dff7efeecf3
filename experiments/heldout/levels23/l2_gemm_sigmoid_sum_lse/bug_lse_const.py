import torch
import torch.nn as nn

batch_size = 64
input_size = 32
hidden_size = 64
output_size = 8


class ModelNew(nn.Module):
    """Gemm -> Sigmoid -> Sum over features -> LogSumExp over the batch (a scalar). linear2 is unused, as in KernelBench."""

    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.linear1 = nn.Linear(input_size, hidden_size)
        self.linear2 = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        x = self.linear1(x)
        x = torch.sigmoid(x)
        x = torch.sum(x, dim=1)
        m = x.max()
        x = m + torch.log(torch.exp(x - m).sum(0) * 1.0002)  # BUG: constant 1.0002 (4th digit)
        return x


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
