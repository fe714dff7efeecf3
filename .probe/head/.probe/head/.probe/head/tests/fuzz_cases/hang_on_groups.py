"""Right, except that it never returns when groups > 1."""

import torch.nn.functional as F
from _base import Base


class ModelNew(Base):
    def forward(self, x):
        w, b, stride, padding, dilation, groups = self.parts()
        while groups > 1:
            pass
        return F.conv2d(x, w, b, stride, padding, dilation, groups)
