"""A candidate whose forward calls sys.exit(0): the code KernelBench scripts read as success."""

import sys

from _conv import Conv


class ModelNew(Conv):
    def forward(self, x):
        sys.exit(0)
