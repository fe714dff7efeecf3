"""Raises with text UTF-8 cannot encode (lone surrogates), a NUL and a terminal escape in its message."""

from _conv import Conv


class ModelNew(Conv):
    def forward(self, x):
        raise ValueError("bad \udcff bytes \ud800 here \x00 and \x1b[2J")
