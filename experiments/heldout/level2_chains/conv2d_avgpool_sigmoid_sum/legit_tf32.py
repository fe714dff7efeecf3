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
    """Convolution with TF32 operands (fp32 accumulation); the rest in fp32."""

    def __init__(self, in_channels, out_channels, kernel_size, pool_kernel_size):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.avg_pool = nn.AvgPool2d(pool_kernel_size)

    def forward(self, x):
        x = F.conv2d(_round_tf32(x), _round_tf32(self.conv.weight), self.conv.bias)
        x = torch.sigmoid(self.avg_pool(x))
        return torch.sum(x, dim=[1, 2, 3])
