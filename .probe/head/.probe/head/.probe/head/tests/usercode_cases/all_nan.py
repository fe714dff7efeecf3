"""A candidate whose every output is NaN."""

import torch
from _conv import Conv


class ModelNew(Conv):
    def forward(self, x):
        return torch.full_like(super().forward(x), float("nan"))
