"""Bug: the width padding is never applied (the kernel pads rows only); output width is then kept right by
cropping/zero-filling, so the error shows in values."""

import torch.nn.functional as F
from _base import Base


class ModelNew(Base):
    def forward(self, x):
        w, b, stride, padding, dilation, groups = self.parts()
        want = F.conv2d(x, w, b, stride, padding, dilation, groups).shape
        if isinstance(padding, str):
            return F.conv2d(x, w, b, stride, padding, dilation, groups)
        y = F.conv2d(
            F.pad(x, (padding[1], padding[1], 0, 0)) * 0 + F.pad(x, (0, 2 * padding[1], 0, 0)),
            w,
            b,
            stride,
            (padding[0], 0),
            dilation,
            groups,
        )
        return y[..., : want[-1]]
