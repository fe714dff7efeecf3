"""KernelBench level1/98_KLDivLoss.py's shape: kl_div(log p, t, batchmean), p, t softmaxes of (16384, 16384) rand."""

import torch
import torch.nn.functional as F
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return F.kl_div(torch.log(predictions), targets, reduction="batchmean")


batch_size = 8192 * 2
input_shape = (8192 * 2,)
dim = 1


def get_inputs():
    scale = torch.rand(())
    predictions = (torch.rand(batch_size, *input_shape) * scale).softmax(dim=-1)
    targets = torch.rand(batch_size, *input_shape).softmax(dim=-1)
    return [predictions, targets]


def get_init_inputs():
    return []
