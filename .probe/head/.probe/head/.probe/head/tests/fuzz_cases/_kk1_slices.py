"""Shared by the (k, k, 1) candidates: the Conv3d as conv2d over depth slices folded into the batch."""

import torch.nn.functional as F
from torch import nn


class SliceConv(nn.Module):
    """Holds the same Conv3d as the problem's Model (same draws); ``slices(x)`` picks the input depth slices."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=False):
        super().__init__()
        self.conv3d = nn.Conv3d(
            in_channels, out_channels, (kernel_size, kernel_size, 1), stride, padding, dilation, groups, bias
        )

    def depth_out(self, depth):
        c = self.conv3d
        return (depth + 2 * c.padding[2] - 1) // c.stride[2] + 1

    def forward(self, x):
        c = self.conv3d
        picked = self.slices(x)  # (N, C, H, W, D_out)
        n, ch, h, w, d = picked.shape
        flat = picked.permute(0, 4, 1, 2, 3).reshape(n * d, ch, h, w)
        y = F.conv2d(flat, c.weight[..., 0], c.bias, c.stride[:2], c.padding[:2], c.dilation[:2], c.groups)
        return y.reshape(n, d, *y.shape[1:]).permute(0, 2, 3, 4, 1).contiguous()

    def slices(self, x):
        c = self.conv3d
        padded = F.pad(x, (c.padding[2], c.padding[2]))
        return padded[..., :: c.stride[2]][..., : self.depth_out(x.shape[-1])]
