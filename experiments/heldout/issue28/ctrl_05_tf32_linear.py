# Correct TF32 candidate: Linear input and weight rounded to TF32 (nearest-even) by hand, fp32 product, GELU.
import torch
from torch import nn


def _tf32(t):
    """Round fp32 to TF32 (10 fraction bits): to nearest, ties to even, on the 13 dropped bits."""
    i = t.contiguous().view(torch.int32)
    i = (i + 0xFFF + ((i >> 13) & 1)) & -0x2000
    return i.view(torch.float32)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = torch.nn.functional.linear(_tf32(x), _tf32(self.linear.weight), self.linear.bias)
        return torch.nn.functional.gelu(y)
