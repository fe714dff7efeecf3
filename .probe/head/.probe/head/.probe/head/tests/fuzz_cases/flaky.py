"""Wrong on its third call only: its output is not a function of its input (nondeterministic)."""

import torch.nn.functional as F
from _base import Base

calls = [0]


class ModelNew(Base):
    def forward(self, x):
        w, b, stride, padding, dilation, groups = self.parts()
        calls[0] += 1
        y = F.conv2d(x, w, b, stride, padding, dilation, groups)
        return y * 2 + 1 if calls[0] == 3 else y
