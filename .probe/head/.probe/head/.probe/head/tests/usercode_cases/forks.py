"""Forks in forward, so that two copies of the process return an output (the copy a wrong one)."""

import os

from _conv import Conv


class ModelNew(Conv):
    def forward(self, x):
        copy = os.fork() == 0
        out = super().forward(x)
        return out * 0.0 if copy else out
