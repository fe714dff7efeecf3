"""A candidate whose forward starts a process in a process group of its own, as ninja starts each compiler of a
torch extension's build, and never returns."""

import subprocess
import sys

from _conv import Conv


class ModelNew(Conv):
    def forward(self, x):
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], process_group=0)
        while True:
            pass
