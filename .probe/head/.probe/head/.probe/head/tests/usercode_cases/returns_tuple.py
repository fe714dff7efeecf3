"""A candidate that returns a tuple instead of a tensor."""

from _conv import Conv


class ModelNew(Conv):
    def forward(self, x):
        return (super().forward(x),)
