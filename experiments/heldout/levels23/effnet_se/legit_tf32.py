import torch
import torch.nn as nn
import torch.nn.functional as F


def tf32(x):
    """Round an fp32 tensor's mantissa to 10 bits, to nearest, ties to even (TF32 operand)."""
    x = x.contiguous()
    i = x.view(torch.int32)
    r = (i + 0xFFF + ((i >> 13) & 1)) & -8192
    return r.view(torch.float32)


batch_size = 4
in_channels = 8
expand_ratio = 4
se_ratio = 0.25
height, width = 8, 8


class ModelNew(nn.Module):
    """EfficientNet MBConv block: expand 1x1, BN, SiLU, depthwise 3x3, BN, SiLU, squeeze-excitation, project 1x1, BN, residual."""

    def __init__(self, in_channels, expand_ratio, se_ratio):
        super().__init__()
        hidden = in_channels * expand_ratio
        squeezed = max(1, int(in_channels * se_ratio))
        self.expand_conv = nn.Conv2d(in_channels, hidden, 1, bias=False)
        self.bn0 = nn.BatchNorm2d(hidden)
        self.depthwise_conv = nn.Conv2d(hidden, hidden, 3, 1, 1, groups=hidden, bias=False)
        self.bn1 = nn.BatchNorm2d(hidden)
        self.se_reduce = nn.Conv2d(hidden, squeezed, 1)
        self.se_expand = nn.Conv2d(squeezed, hidden, 1)
        self.project_conv = nn.Conv2d(hidden, in_channels, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(in_channels)

    def forward(self, x):
        h = F.silu(self.bn0(F.conv2d(tf32(x), tf32(self.expand_conv.weight))))
        h = F.silu(
            self.bn1(F.conv2d(tf32(h), tf32(self.depthwise_conv.weight), None, 1, 1, 1, self.depthwise_conv.groups))
        )
        s = F.adaptive_avg_pool2d(h, 1)
        s = F.silu(F.conv2d(tf32(s), tf32(self.se_reduce.weight), self.se_reduce.bias))
        s = torch.sigmoid(F.conv2d(tf32(s), tf32(self.se_expand.weight), self.se_expand.bias))
        h = h * s
        h = self.bn2(F.conv2d(tf32(h), tf32(self.project_conv.weight)))
        return h + x


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, expand_ratio, se_ratio]
