"""Triplet margin loss (margin 1, p = 2, torch's pairwise_distance with eps = 1e-6), a scalar, in KernelBench's format.

The positives lie above the anchors and the negatives below them by 0 to 0.01 in every coordinate, so each
difference a − p has one sign across a row (and a − n the other): the eps that pairwise_distance adds to every
difference moves each distance the same way by about eps·√dim·0.87 ≈ 5.5e-5, and the two distances in opposite
directions.
"""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.loss = nn.TripletMarginLoss(margin=margin)

    def forward(self, anchor, positive, negative):
        return self.loss(anchor, positive, negative)


def get_inputs():
    anchor = torch.rand(128, 4096)
    return [anchor, anchor + 0.01 * torch.rand(128, 4096), anchor - 0.01 * torch.rand(128, 4096)]


def get_init_inputs():
    return [1.0]
