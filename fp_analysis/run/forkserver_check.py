"""The fork server's self-check: a target that prints what the user's code would see of its process.

Started both ways, forked (``fp_analysis.run.forkserver``) and as a fresh interpreter, the two descriptions must
agree on everything but what a fork changes by design (``tests/process/test_forkserver.py``). It is a target like the
others (``forkserver.TARGETS["describe"]``), started through ``children.ChildProcess``, so it sets itself up as
every child does (``childsetup.child_setup``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time

from .childsetup import child_setup

__all__ = ["describe"]


def describe(*args: str) -> None:
    """A child that prints, as JSON, what it would look like to the user's code, then ends as ``args`` say.

    Started both ways (forked and fresh), the two descriptions must agree on everything but what a fork
    changes by design (``tests/process/test_forkserver.py``). ``args``: anything, echoed; ``exit=N`` ends with status
    N, ``signal=NAME`` by that signal, ``sleep=S`` waits S seconds first.
    """
    import numpy
    import torch

    child_setup()
    fds = []
    for fd in sorted(int(name) for name in os.listdir("/proc/self/fd")):
        with contextlib.suppress(OSError):  # the listing's own descriptor is closed by now
            os.fstat(fd)
            fds.append(fd)
    handlers = {}
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE, signal.SIGHUP, signal.SIGUSR1):
        handler = signal.getsignal(sig)
        handlers[sig.name] = handler.name if isinstance(handler, signal.Handlers) else getattr(handler, "__name__", "?")
    print(
        json.dumps(
            {
                "argv": sys.argv,
                "own_session": os.getsid(0) == os.getpid(),
                "cwd": os.getcwd(),
                "env": dict(os.environ),
                "fds": fds,
                "signals": handlers,
                "wakeup_fd": signal.set_wakeup_fd(-1),
                "threads": torch.get_num_threads(),
                "numpy_draw": float(numpy.random.random()),  # noqa: NPY002 - the legacy global stream is the one to check
                "sys_path": sys.path,
                "stdin_is_devnull": os.path.samefile("/proc/self/fd/0", os.devnull),
                "cuda_initialized": torch.cuda.is_initialized(),
                "numba_loaded": "numba" in sys.modules,  # by the server's warm-up (``forkserver_warmup``), or not
                "symbolic_shapes_loaded": "torch.fx.experimental.symbolic_shapes" in sys.modules,  # the same
            }
        ),
        flush=True,
    )
    for arg in args:
        if arg.startswith("sleep="):
            time.sleep(float(arg[6:]))
        if arg.startswith("exit="):
            sys.exit(int(arg[5:]))
        if arg.startswith("signal="):
            os.kill(os.getpid(), signal.Signals[arg[7:]])
