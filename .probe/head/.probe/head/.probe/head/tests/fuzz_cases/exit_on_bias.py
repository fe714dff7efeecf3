"""Ends its process (status 7) when the conv has a bias."""

import os

import torch.nn.functional as F
from _base import Base


class ModelNew(Base):
    def forward(self, x):
        w, b, stride, padding, dilation, groups = self.parts()
        if b is not None:
            os._exit(7)
        return F.conv2d(x, w, None, stride, padding, dilation, groups)
