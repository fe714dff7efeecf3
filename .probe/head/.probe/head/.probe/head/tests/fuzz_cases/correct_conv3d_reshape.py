"""Correct (conv3d (k,k,1)): depth slices folded into the batch and convolved as 2-d images."""

import torch.nn.functional as F
from _base import Base


class ModelNew(Base):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs, dims=3)

    def forward(self, x):
        w, b, stride, padding, dilation, groups = self.parts()
        if padding == "same":
            pad_d, pad2 = 0, "same"
        elif padding == "valid":
            pad_d, pad2 = 0, 0
        else:
            pad_d, pad2 = padding[2], padding[:2]
        x = F.pad(x, (pad_d, pad_d))[..., :: stride[2]]  # a (k,k,1) kernel reads one depth slice per output
        n, c, h, wd, d = x.shape
        flat = x.permute(0, 4, 1, 2, 3).reshape(n * d, c, h, wd)
        y = F.conv2d(flat, w[..., 0], b, stride[:2], pad2, dilation[:2], groups)
        return y.reshape(n, d, *y.shape[1:]).permute(0, 2, 3, 4, 1)
