"""Bug: output columns are computed in tiles of 4 and the remainder tile is dropped (left at zero)."""

import torch.nn.functional as F
from _base import Base


class ModelNew(Base):
    def forward(self, x):
        w, b, stride, padding, dilation, groups = self.parts()
        y = F.conv2d(x, w, b, stride, padding, dilation, groups)
        full = (y.shape[-1] // 4) * 4
        y[..., full:] = 0.0
        return y
