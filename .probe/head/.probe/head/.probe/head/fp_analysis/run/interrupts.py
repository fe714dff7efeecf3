"""How fpa ends on a signal: SIGTERM and SIGHUP as Ctrl-C, and never by the signal itself.

A command killed by SIGTERM would leave its job's processes running and its files half written. So SIGTERM and
SIGHUP raise ``KeyboardInterrupt``, as SIGINT does, and each command ends on it the documented way (exit 130,
its processes ended, what a triage stored kept): ``raise_on_signals`` for the whole command (``fpa``'s entry point
installs it first thing), ``terminate_as_interrupt`` around a job run from a library call. Once a command has
done its work and writes what it found, a signal no longer stops it half-way through the output (``work_done``):
it ends with the status of the work done.
"""

from __future__ import annotations

import contextlib
import signal
import threading

__all__ = ["kept_signal_handlers", "raise_on_signals", "signal_name", "terminate_as_interrupt", "work_done"]

_ENDING = (signal.SIGTERM, signal.SIGHUP)


def signal_name(number: int) -> str:
    """The name of signal ``number`` (``SIGTERM``), or "signal N" for one Python does not name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"ended by {signal_name(signum)}")


def raise_on_signals() -> None:
    """From now on, SIGTERM and SIGHUP raise KeyboardInterrupt in the main thread, as SIGINT does."""
    if threading.current_thread() is threading.main_thread():
        for sig in _ENDING:
            signal.signal(sig, _interrupt)
        signal.signal(signal.SIGINT, signal.default_int_handler)


@contextlib.contextmanager
def terminate_as_interrupt():
    """SIGTERM/SIGHUP raise KeyboardInterrupt while the block runs (a job: its children are then ended and its files
    removed), and their handlers are put back after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {sig: signal.signal(sig, _interrupt) for sig in _ENDING}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def kept_signal_handlers():
    """The handlers of SIGINT, SIGTERM and SIGHUP as they were before the block, put back after it (a command run
    inside a process that goes on: a test, a notebook); in ``fpa``'s own process (``raise_on_signals`` installed)
    they stay as the block left them, since the process ends next."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, *_ENDING)}
    if threading.current_thread() is not threading.main_thread() or saved[signal.SIGTERM] is _interrupt:
        yield
        return
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def work_done() -> None:
    """The command's work is done and its output is being written: from now on SIGINT, SIGTERM and SIGHUP are
    ignored, so the output is whole and the command ends with the status of the work."""
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, *_ENDING):
            signal.signal(sig, signal.SIG_IGN)
