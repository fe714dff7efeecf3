# Reference: Linear (128→64), LayerNorm over the 64 features (default affine), exact GELU, fp32.
import torch
from torch import nn

batch_size = 16
in_features = 128
out_features = 64


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.ln = nn.LayerNorm(out_features)

    def forward(self, x):
        return torch.nn.functional.gelu(self.ln(self.gemm(x)))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
