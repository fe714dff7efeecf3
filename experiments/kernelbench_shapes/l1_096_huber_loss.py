"""KernelBench level1/96_HuberLoss.py's shape (Pareto inputs): smooth_l1, (32768, 32768) Pareto(0.01, 1.5) · rand()."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.distributions import Pareto


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return F.smooth_l1_loss(predictions, targets)


batch_size = 32768
input_shape = (32768,)
dim = 1


def get_inputs():
    scale = torch.rand(())
    predictions = Pareto(0.01, 1.5).sample((batch_size, *input_shape))
    targets = Pareto(0.01, 1.5).sample((batch_size, *input_shape))
    return [predictions * scale, targets]


def get_init_inputs():
    return []
