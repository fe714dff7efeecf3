"""Bug (conv3d): the depth padding is ignored and the missing slices are zero-filled at the end."""

import torch.nn.functional as F
from _base import Base


class ModelNew(Base):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs, dims=3)

    def forward(self, x):
        w, b, stride, padding, dilation, groups = self.parts()
        want = F.conv3d(x, w, b, stride, padding, dilation, groups).shape
        if isinstance(padding, str):
            return F.conv3d(x, w, b, stride, padding, dilation, groups)
        y = F.conv3d(x, w, b, stride, (padding[0], padding[1], 0), dilation, groups)
        return F.pad(y, (0, want[-1] - y.shape[-1]))[..., : want[-1]]
