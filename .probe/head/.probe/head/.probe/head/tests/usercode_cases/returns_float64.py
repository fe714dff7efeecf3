"""A candidate that returns float64 where the reference returns float32."""

from _conv import Conv


class ModelNew(Conv):
    def forward(self, x):
        return super().forward(x).double()
