"""A correct candidate that talks: at import, in forward, and straight to file descriptor 1 as a compiler would."""

import os
import sys

from _conv import Conv

print("building extension conv_ext... [1/3] c++ -O3 -c conv.cpp")
print("\x1b[2J\x1b[31mcolour and a cleared screen\x1b[0m")
os.write(1, b"ninja: no work to do.\n")


class ModelNew(Conv):
    def forward(self, x):
        print("forward called with", tuple(x.shape))
        print("a warning of the kernel's", file=sys.stderr)
        return super().forward(x)
