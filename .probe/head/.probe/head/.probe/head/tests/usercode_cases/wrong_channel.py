"""A candidate that is right except for one output channel, which is off by 0.01."""

from _conv import Conv


class ModelNew(Conv):
    def forward(self, x):
        y = super().forward(x).clone()
        y[:, 1] += 0.01
        return y
