"""Right, and leaves a process behind in a session of its own (out of reach of its job's group); prints its pid."""

import subprocess
import sys

from _conv import Conv

_DAEMON = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True)
print(f"daemon {_DAEMON.pid}", flush=True)


class ModelNew(Conv):
    pass
