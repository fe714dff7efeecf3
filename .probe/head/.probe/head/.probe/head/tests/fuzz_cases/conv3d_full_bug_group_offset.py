"""Bug: every group reads the first group's input channels (a missing group offset)."""

import torch
import torch.nn.functional as F
from _conv3d_full import FullConv3d


class ModelNew(FullConv3d):
    def forward(self, x):
        c = self.conv
        cg, og = x.shape[1] // c.groups, c.out_channels // c.groups
        parts = [
            F.conv3d(x[:, :cg], c.weight[g * og : (g + 1) * og],
                     None if c.bias is None else c.bias[g * og : (g + 1) * og], c.stride, c.padding)
            for g in range(c.groups)
        ]  # fmt: skip
        return torch.cat(parts, dim=1)
