"""A candidate whose forward crashes the process with a segmentation fault (a read through a null pointer)."""

import ctypes

from _conv import Conv


class ModelNew(Conv):
    def forward(self, x):
        return ctypes.string_at(0)
