"""Right, and leaves a process behind in a session of its own (out of reach of its job's group), writing its pid to
the file FPA_TEST_CANARY names."""

import os
import subprocess
import sys

from _conv import Conv

_DAEMON = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True)
with open(os.environ["FPA_TEST_CANARY"], "w") as out:
    out.write(str(_DAEMON.pid))


class ModelNew(Conv):
    pass
