"""The problem_relu Model itself, as a candidate: identical output."""

import torch
from _conv import Conv


class ModelNew(Conv):
    def forward(self, x):
        return torch.relu(super().forward(x))
