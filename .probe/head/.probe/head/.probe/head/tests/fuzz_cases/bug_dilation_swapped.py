"""Bug: the dilation is applied with its axes swapped (rows get the column dilation)."""

import torch.nn.functional as F
from _base import Base


class ModelNew(Base):
    def forward(self, x):
        w, b, stride, padding, dilation, groups = self.parts()
        return F.conv2d(x, w, b, stride, padding, (dilation[1], dilation[0]), groups)
