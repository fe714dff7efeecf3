"""Bug: depth stride ignored: consecutive depth slices are read instead of every stride-th one."""

import torch.nn.functional as F
from _kk1_slices import SliceConv


class ModelNew(SliceConv):
    def slices(self, x):
        c = self.conv3d
        padded = F.pad(x, (c.padding[2], c.padding[2]))
        return padded[..., : self.depth_out(x.shape[-1])]
