"""Correct: the conv summed in fp64 and rounded once (another, more accurate, summation)."""

import torch.nn.functional as F
from _base import Base


class ModelNew(Base):
    def forward(self, x):
        w, b, stride, padding, dilation, groups = self.parts()
        y = F.conv2d(x.double(), w.double(), None if b is None else b.double(), stride, padding, dilation, groups)
        return y.float()
