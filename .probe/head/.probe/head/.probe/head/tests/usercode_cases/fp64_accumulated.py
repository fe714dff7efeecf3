"""A correct fp32 kernel: the conv summed in fp64 and rounded once."""

import torch.nn.functional as F
from _conv import Conv


class ModelNew(Conv):
    def forward(self, x):
        c = self.conv
        return F.conv2d(x.double(), c.weight.double(), None, c.stride, c.padding).float()
