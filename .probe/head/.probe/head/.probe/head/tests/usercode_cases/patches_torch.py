"""A wrong candidate that patches torch so that, in a shared process, the reference would compute the same wrong
thing: nn.Conv2d's forward doubled, the new TF32 API switched, a default device set. In its own process, none of
it reaches the reference, so the bug shows."""

import torch
from _conv import Conv
from torch import nn

_forward = nn.Conv2d.forward
nn.Conv2d.forward = lambda self, x: 2 * _forward(self, x)
torch.backends.cudnn.conv.fp32_precision = "ieee"
torch.set_default_device("cpu")


class ModelNew(Conv):
    def forward(self, x):
        return self.conv(x)
