"""A candidate that drops the last output column."""

from _conv import Conv


class ModelNew(Conv):
    def forward(self, x):
        return super().forward(x)[..., :-1]
