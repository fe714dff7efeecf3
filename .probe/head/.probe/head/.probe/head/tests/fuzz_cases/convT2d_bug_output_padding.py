"""Bug: output_padding ignored: the last rows and columns are zeros instead of what the kernel puts there."""

import torch.nn.functional as F
from _transposed import DirectTransposed


class ModelNew(DirectTransposed):
    def output_padding(self):
        return (0, 0)

    def forward(self, x):
        y = super().forward(x)
        op = self.conv_transpose.output_padding
        return F.pad(y, (0, op[1], 0, op[0]))
