"""Wrong on every other call (four outputs off by 1.0), and computes with TF32-rounded operands on the others (many
small failures, which arithmetic explains): judged by the failing count alone, the TF32 call would be analysed."""

import torch
import torch.nn.functional as F
from _conv import Conv


def _tf32(t):
    bits = t.contiguous().view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32)  # round to TF32's 10 fraction bits


class ModelNew(Conv):
    calls = 0

    def forward(self, x):
        ModelNew.calls += 1
        if ModelNew.calls % 2:
            out = super().forward(x)
            out[0, 0, 0, :4] += 1.0
            return out
        return F.conv2d(_tf32(x), _tf32(self.conv.weight), None, 1, 1)
