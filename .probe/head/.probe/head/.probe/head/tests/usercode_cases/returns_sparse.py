"""A candidate that returns its (right) output as a sparse tensor."""

from _conv import Conv


class ModelNew(Conv):
    def forward(self, x):
        return super().forward(x).to_sparse()
