"""KernelBench level1/99_TripletMarginLoss.py's shape: margin 1.0, (32768, 8192) rand, the anchor · rand()."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, margin=1.0):
        super().__init__()
        self.loss_fn = nn.TripletMarginLoss(margin=margin)

    def forward(self, anchor, positive, negative):
        return self.loss_fn(anchor, positive, negative)


batch_size = 32768
input_shape = (8192,)
dim = 1


def get_inputs():
    scale = torch.rand(())
    anchor = torch.rand(batch_size, *input_shape) * scale
    positive = torch.rand(batch_size, *input_shape)
    negative = torch.rand(batch_size, *input_shape)
    return [anchor, positive, negative]


def get_init_inputs():
    return [1.0]
