"""Correct: the Conv3d summed in fp64 and rounded once."""

import torch.nn.functional as F
from _conv3d_full import FullConv3d


class ModelNew(FullConv3d):
    def forward(self, x):
        c = self.conv
        b = None if c.bias is None else c.bias.double()
        return F.conv3d(x.double(), c.weight.double(), b, c.stride, c.padding, c.dilation, c.groups).float()
