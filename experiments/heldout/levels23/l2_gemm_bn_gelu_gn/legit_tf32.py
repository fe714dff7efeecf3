import torch
import torch.nn as nn


def tf32(x):
    """Round an fp32 tensor's mantissa to 10 bits, to nearest, ties to even (TF32 operand)."""
    x = x.contiguous()
    i = x.view(torch.int32)
    r = (i + 0xFFF + ((i >> 13) & 1)) & -8192
    return r.view(torch.float32)


batch_size = 64
in_features = 64
out_features = 96
num_groups = 8


class ModelNew(nn.Module):
    """Gemm -> BatchNorm1d (training) -> GELU -> GroupNorm -> mean over features -> ReLU."""

    def __init__(self, in_features, out_features, num_groups):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.batch_norm = nn.BatchNorm1d(out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        # non-trivial GroupNorm affine (with the default 1/0 the feature mean is identically the bias mean)
        nn.init.normal_(self.group_norm.weight, 1.0, 0.5)
        nn.init.normal_(self.group_norm.bias, 0.0, 0.5)

    def forward(self, x):
        x = torch.nn.functional.linear(tf32(x), tf32(self.gemm.weight), self.gemm.bias)
        x = self.batch_norm(x)
        x = torch.nn.functional.gelu(x)
        x = self.group_norm(x)
        x = torch.mean(x, dim=1, keepdim=True)
        x = torch.relu(x)
        return x


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups]
