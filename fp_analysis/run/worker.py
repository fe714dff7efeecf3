"""The worker process's side of a job: read the job, run it, report where it is, sign the result, leave.

The worker (``child_main``, the fork server's target ``worker``) is the child a job's supervisor
(``fp_analysis.run.supervisor``) starts: it imports the problem file, runs the reference ``Model`` and the
analysis (the job: one of ``JOBS``), and starts the candidate process for the solution (``fp_analysis.run.candidate``).
It reports each call into the user's code as it enters and leaves it (``report_event``, over a pipe of its own),
so that its parent can enforce the timeout and name whatever ends the worker.

It writes its result (or the error that stopped it) as strict JSON to a file, published by rename, then leaves with
``os._exit`` so that threads or ``atexit`` handlers the user's code left behind cannot hold it. The result is
signed (HMAC-SHA256) with a key the parent hands the worker through a pipe, which the worker reads and closes
before any user code runs: the user's code can reach the job's folder, not the key.
"""

from __future__ import annotations

import contextlib
import hmac
import importlib
import json
import os
import pathlib
import sys
import threading

from .. import records
from ..errors import FpaError, InternalError, OutOfScopeError, UserCodeError
from . import hardening
from .childsetup import child_setup

__all__ = ["CHANNEL_ENV", "JOBS", "KEY_ENV", "child_main", "report_event"]

# The jobs a worker runs: name → (module, function). A function takes keyword arguments that are JSON
# data and returns JSON data.
JOBS = {
    "explain": ("fp_analysis.explain.job", "explain_job"),
    "fuzz": ("fp_analysis.fuzz.search", "fuzz_job"),
    "replay": ("fp_analysis.fuzz.search", "replay_job"),
    "prepare": ("fp_analysis.run.candidate", "prepare_job"),
    "tolerance": ("fp_analysis.study.problem_tolerance", "tolerance_job"),
}

CHANNEL_ENV = "FPA_WORKER_FD"  # the pipe the worker reports its events on
# the pipe the worker reads its result's signing key from (never a file: see ``supervisor.run_job``)
KEY_ENV = "FPA_KEY_FD"
_channel = None  # the worker's end of the event pipe; None outside a worker
_owner_pid = None  # the worker's pid: a process the user's code forks must not speak for it
_channel_lock = threading.Lock()  # run_check draws the next trial's inputs in a thread


def report_event(event: str, **fields) -> None:
    """Tell the parent where the worker is (``enter``/``leave`` a user call, ``progress``); a no-op outside a
    worker, and in any process the user's code forked from it."""
    if _channel is None or os.getpid() != _owner_pid:
        return
    with _channel_lock, contextlib.suppress(OSError, ValueError):  # a thread may report while another does
        _channel.write(records.dumps({"event": event, **fields}, indent=None) + "\n")
        _channel.flush()


def child_main(folder: str) -> None:
    """The worker's whole life: read the job, run it, write the result, leave (see the module docstring)."""
    global _channel, _owner_pid
    import traceback

    child_setup()
    hardening.not_dumpable()  # the solution's process may not read or write this one's memory (hardening)
    folder = pathlib.Path(folder)
    _owner_pid = os.getpid()
    _channel = os.fdopen(int(os.environ.pop(CHANNEL_ENV)), "w", buffering=1)
    job = json.loads((folder / "job.json").read_text())
    key_fd = int(os.environ.pop(KEY_ENV))
    key = os.read(key_fd, 64)
    os.close(key_fd)  # before any user code runs
    try:
        module, function = JOBS[job["job"]]
        value = getattr(importlib.import_module(module), function)(**job["kwargs"], folder=str(folder))
        from ..numerics.backends import (
            versions,  # torch is loaded here already; the store (pyarrow) is the supervisor's
        )

        record = {"value": value, "versions": versions()}
    except UserCodeError as error:
        record = {"error": {**error.to_dict(), "kind": "user_code"}}
    except InternalError as error:
        record = {"error": {"kind": "internal", "message": str(error), "traceback": error.traceback}}
    except OutOfScopeError as error:
        record = {"error": {"kind": "out_of_scope", "message": str(error)}}
    except FpaError as error:
        record = {"error": {"kind": "usage", "message": str(error)}}
    except BaseException as error:  # whatever it is, the parent must learn of it
        message = f"{type(error).__name__}: {error}"
        record = {"error": {"kind": "internal", "message": message, "traceback": traceback.format_exc()}}
    if os.getpid() != _owner_pid:  # a process the user's code forked, returning through our frames
        os._exit(0)
    text = records.dumps(record)
    tmp = folder / "result.json.part"
    tmp.write_text(json.dumps({"record": text, "mac": hmac.new(key, text.encode(), "sha256").hexdigest()}))
    os.replace(tmp, folder / "result.json")
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)
