import torch
import torch.nn as nn
import torch.nn.functional as F


def _round_tf32(t):
    # Round to TF32 (10 explicit mantissa bits), round-to-nearest on the float32 bit pattern.
    if t.dtype != torch.float32:
        return _round_tf32(t.float()).to(t.dtype)
    bits = t.contiguous().view(torch.int32)
    bits = (bits + 0x1000) & -0x2000
    return bits.view(torch.float32)


class ModelNew(nn.Module):
    """GEMM with TF32 operands, fp32 accumulation and fp32 epilogue."""

    def __init__(self, input_size, hidden_size, scaling_factor):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(input_size, hidden_size)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        y = F.linear(_round_tf32(x), _round_tf32(self.gemm.weight), self.gemm.bias)
        return y + torch.sigmoid(y) * self.scaling_factor
