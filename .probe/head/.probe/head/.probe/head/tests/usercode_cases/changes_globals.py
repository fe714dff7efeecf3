"""A correct candidate that changes torch's global state at import: TF32 off, and conv2d replaced by its own."""

import torch
import torch.nn.functional as F
from _conv import Conv

torch.backends.cudnn.allow_tf32 = False
_original = F.conv2d


def _conv2d(*args, **kwargs):
    return _original(*args, **kwargs) * 2  # would make the reference wrong, if it stayed


F.conv2d = _conv2d


class ModelNew(Conv):
    def forward(self, x):
        c = self.conv
        return _original(x, c.weight, None, c.stride, c.padding)
