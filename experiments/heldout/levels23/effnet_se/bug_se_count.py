import torch
import torch.nn as nn
import torch.nn.functional as F

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
        h = F.silu(self.bn0(self.expand_conv(x)))
        h = F.silu(self.bn1(self.depthwise_conv(h)))
        s = h.sum(dim=(2, 3), keepdim=True) / (h.shape[2] * h.shape[3] + 1)  # BUG: H*W+1
        s = F.silu(self.se_reduce(s))
        s = torch.sigmoid(self.se_expand(s))
        h = h * s
        h = self.bn2(self.project_conv(h))
        return h + x


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, expand_ratio, se_ratio]
