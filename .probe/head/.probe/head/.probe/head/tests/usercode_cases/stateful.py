"""A candidate right on its first call that then returns that first output again (a stale cache)."""

from _conv import Conv


class ModelNew(Conv):
    def forward(self, x):
        if not hasattr(self, "cached"):
            self.cached = super().forward(x)
        return self.cached
