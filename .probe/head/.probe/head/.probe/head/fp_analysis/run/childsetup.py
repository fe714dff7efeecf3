"""What every child process of fpa's does first, before anything else runs in it (``child_setup``).

Every job process (the worker, the candidate process, the fork server's self-check) calls it first, forked or
fresh: it takes the connection to the fork server it was given (``forkserver.child_started``), turns on a
faulthandler, sets the file-size limit its output files are held to (``OUTPUT_LIMIT_BYTES``), and ends itself and
its group when its parent dies, however the parent dies. The parent's side of the same contract, the pipe this
watches included, is ``fp_analysis.run.children``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading

from . import forkserver

__all__ = ["CHANNEL_LOST_STATUS", "OUTPUT_LIMIT_BYTES", "PARENT_ENV", "child_setup"]

# Bytes a child may write to any one file (RLIMIT_FSIZE): its stdout and stderr files included. A hung
# kernel printing in a loop stops here instead of filling the disk; extension builds stay far below.
OUTPUT_LIMIT_BYTES = 2 * 10**9

# The status a child leaves with when the user's code has closed the descriptors fpa talks to it through (its
# channel, or the pipe that tells it its parent is alive): named as that, not as a crash with a traceback of ours.
CHANNEL_LOST_STATUS = 86

# The pipe whose read end a child watches for its parent's end (its number, set by ``children.ChildProcess``).
PARENT_ENV = "FPA_PARENT_FD"


def child_setup() -> None:
    """What every child does first: a faulthandler, the file-size limit, and ending itself with its parent.

    The parent holds the write end of a pipe whose read end the child watches in a thread: when the parent
    dies, however (SIGKILL included), the read returns and the child kills its own group.
    """
    import faulthandler
    import resource

    forkserver.child_started()
    faulthandler.enable()  # a segfault in the user's extension leaves a Python traceback in stderr
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_FSIZE, (OUTPUT_LIMIT_BYTES, OUTPUT_LIMIT_BYTES))
    fd = int(os.environ.pop(PARENT_ENV))

    def watch():
        try:
            os.read(fd, 1)
        except OSError:  # the user's code closed our pipe: the child can no longer learn of its parent's end
            os._exit(CHANNEL_LOST_STATUS)
        os.killpg(os.getpgrp(), signal.SIGKILL)

    threading.Thread(target=watch, name="fpa-parent-watch", daemon=True).start()
