"""A candidate that writes NaN and inf into a small patch (about 1% of the outputs) and is right elsewhere."""

from _conv import Conv


class ModelNew(Conv):
    def forward(self, x):
        y = super().forward(x).clone()
        y[0, 2, 3:5, 4:6] = float("nan")
        y[1, 5, 7, 8] = float("inf")
        return y
