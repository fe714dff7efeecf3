import torch
import torch.nn as nn


def tf32(x):
    """Round an fp32 tensor's mantissa to 10 bits, to nearest, ties to even (TF32 operand)."""
    x = x.contiguous()
    i = x.view(torch.int32)
    r = (i + 0xFFF + ((i >> 13) & 1)) & -8192
    return r.view(torch.float32)


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
        x = torch.nn.functional.linear(tf32(x), tf32(self.linear1.weight), self.linear1.bias)
        x = torch.sigmoid(x)
        x = torch.sum(x, dim=1)
        x = torch.logsumexp(x, dim=0)
        return x


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
