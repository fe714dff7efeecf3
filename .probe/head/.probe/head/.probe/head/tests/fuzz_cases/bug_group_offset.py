"""Bug: every group reads the first group's input channels (a missing group offset)."""

import torch
import torch.nn.functional as F
from _base import Base


class ModelNew(Base):
    def forward(self, x):
        w, b, stride, padding, dilation, groups = self.parts()
        cg, og = x.shape[1] // groups, w.shape[0] // groups
        outs = [
            F.conv2d(
                x[:, :cg],
                w[g * og : (g + 1) * og],
                None if b is None else b[g * og : (g + 1) * og],
                stride,
                padding,
                dilation,
            )
            for g in range(groups)
        ]
        return torch.cat(outs, dim=1)
