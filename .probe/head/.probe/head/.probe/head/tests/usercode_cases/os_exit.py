"""A candidate whose forward ends the process at once, with status 3 and nothing printed."""

import os

from _conv import Conv


class ModelNew(Conv):
    def forward(self, x):
        os._exit(3)
