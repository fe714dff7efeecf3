"""The ``fpa`` command's entry point: ``fpa explain`` launches the fork server before the command line loads.

The server's imports (torch above all) are the longest step of a small explanation, and the command line's own
start (typer, rich, the argument checks) overlaps them only if the server is launched first (the measurements:
experiments/PERF_NOTES.md). Only for ``explain``, one job whose start is the wait its
user sees, and never with ``--help``; a server launched for a command that then stops at a bad argument is
ended when the command ends (``forkserver.prestart``).
"""

from __future__ import annotations

import json
import os
import sys

__all__ = ["main"]


def main() -> None:
    _closed_streams_to_devnull()
    from ..run.interrupts import raise_on_signals

    raise_on_signals()  # first: a SIGTERM from here on ends the command the documented way (exit 130)
    try:
        _main()
    except KeyboardInterrupt:  # before the command line took over (it says the same itself, --json included)
        message = "interrupted; nothing was judged"
        print(f"error: {message}", file=sys.stderr)
        if "--json" in sys.argv[1:]:
            print(json.dumps({"error": {"exit_code": 130, "kind": "interrupted", "message": message}}), flush=True)
        raise SystemExit(130) from None


def _main() -> None:
    try:
        os.getcwd()
    except FileNotFoundError:  # every job process starts in it: say so plainly rather than fail inside
        print("error: the current folder no longer exists; cd to one that does", file=sys.stderr)
        raise SystemExit(2) from None
    from ..run.hardening import not_dumpable

    not_dumpable()  # the solutions fpa runs may not read or write its memory (fp_analysis.run.hardening)
    arguments = sys.argv[1:]
    if arguments[:1] == ["explain"] and "--help" not in arguments:
        from ..run.children import start_fork_server

        start_fork_server()
    from .app import main as command_line

    command_line()


def _closed_streams_to_devnull() -> None:
    """A stdout or stderr the caller closed (``fpa … >&-``: Python then has None for it) becomes /dev/null: what
    would be printed is dropped, and the exit status still says how the command ended. Opened in fd order, so the
    closed descriptor itself is the one reused, and the processes fpa starts inherit a usable one."""
    for name in ("stdin", "stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "r" if name == "stdin" else "w"))  # open as long as fpa runs
