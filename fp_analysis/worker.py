"""Running a job on the user's code in a child process: a timeout per call, output captured, the child's fate named.

``fpa explain`` and ``fpa fuzz`` import and run files the user gives them, and such code may print,
exit, hang, crash or change global state. So the whole job (loading both files, KernelBench's check, the
analysis) runs in a child process (``child_main``), and this process only
supervises it:

* **Output.** The child's stdout and stderr (file descriptors 1 and 2, so a compiler that
  ``load_inline`` runs is captured too) go to files; the parent keeps the head and tail of each and never
  mixes them into its own output, so ``--json`` stays ours alone.
* **Where the child is.** The child reports each call into the user's code as it enters and leaves it
  (``report_event``, over a pipe of its own), so whatever ends the child can be named: "ModelNew.forward
  called os._exit(3)", "killed by SIGSEGV in Model.__init__".
* **Timeout.** Each call into the user's code must return within ``timeout`` seconds; otherwise the
  child's whole process group (compilers it started included) is killed with SIGKILL. fp_analysis's own
  work between calls has no deadline: it reports progress instead.
* **Result.** The child writes its result (or the error that stopped it) as strict JSON to a file,
  published by rename, then leaves with ``os._exit`` so that threads or ``atexit`` handlers the user's
  code left behind cannot hold it.

The fates, and what the parent raises: the job returned → its value; the user's code raised, exited
(``sys.exit`` or ``os._exit``), was killed by a signal, timed out or returned the wrong thing →
``UserCodeError`` (exit 3); a usage error the job found (a Model out of scope, say) → ``FpaError``
(exit 2); anything else → ``InternalError`` (exit 4), with the child's traceback.

This module does not import torch: the parent that only supervises starts fast.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import json
import os
import pathlib
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from . import records
from .errors import FpaError, InternalError, ParameterError, UserCodeError

__all__ = ["DEFAULT_TIMEOUT_S", "CapturedOutput", "JobResult", "child_main", "report_event", "run_job"]

# Seconds one call into the user's code may take. A full-size KernelBench forward on a 2-core CPU takes
# up to 79 s (shared/facts/kernelbench_conv_families.md) and a load_inline build about a minute, so 300 s
# stops a hang without stopping real work.
DEFAULT_TIMEOUT_S = 300.0

# The jobs a worker runs: name → (module, function). A function takes keyword arguments that are JSON
# data and returns JSON data.
JOBS = {
    "explain": ("fp_analysis.explain", "explain_job"),
    "fuzz": ("fp_analysis.fuzz", "fuzz_job"),
    "replay": ("fp_analysis.fuzz", "replay_job"),
}

# How much of each captured stream is kept: its first and last this many bytes.
_KEEP_BYTES = 16_384

_CHANNEL_ENV = "FPA_WORKER_FD"
# Not ``-m fp_analysis.worker``: the package's __init__ imports this module first, and runpy warns about that.
_CHILD_COMMAND = "import sys; from fp_analysis.worker import child_main; child_main(sys.argv[1])"
_channel = None  # the child's end of the event pipe; None outside a worker


@dataclasses.dataclass(frozen=True)
class CapturedOutput:
    """What the child's process wrote to stdout and stderr: head and tail of each, and the full sizes."""

    stdout: str
    stderr: str
    stdout_bytes: int
    stderr_bytes: int

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def tail(self, lines: int = 6, width: int = 160) -> list[str]:
        """The last ``lines`` lines of each non-empty stream, each cut to ``width`` characters, for text output."""
        out = []
        for name, text, size in (
            ("stdout", self.stdout, self.stdout_bytes),
            ("stderr", self.stderr, self.stderr_bytes),
        ):
            rows = text.splitlines()
            if not rows:
                continue
            shown = rows[-lines:]
            out.append(f"{name} ({size} bytes, {len(rows)} lines kept; last {len(shown)}):")
            out += [f"  | {r[:width]}{'…' if len(r) > width else ''}" for r in shown]
        return out


@dataclasses.dataclass(frozen=True)
class JobResult:
    """A finished job: its value and how the worker ran."""

    value: dict
    output: CapturedOutput
    seconds: float  # wall time of the child, start to exit
    user_seconds: float  # of which inside calls into the user's code

    def worker_record(self) -> dict:
        """The ``worker`` block of ``--json``: time spent and the user's output."""
        return {"seconds": self.seconds, "user_code_seconds": self.user_seconds, **self.output.to_dict()}


# ------------------------------------------------------------------------------------------ parent side


def run_job(
    job: str,
    kwargs: dict,
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    on_event: Callable[[dict], None] | None = None,
) -> JobResult:
    """Run ``JOBS[job](**kwargs)`` in a child process and return its result; raise what stopped it.

    ``on_event`` sees every event the child reports (``{"event": "enter", "where": ..., "detail": ...}``,
    ``"leave"``, ``"progress"``), for a progress display. Raises ``UserCodeError`` (its ``details`` carry
    the time spent and the captured output under ``"worker"``), ``FpaError`` for a usage error found by the job,
    ``InternalError`` otherwise.
    """
    if job not in JOBS:
        raise ParameterError(f"Got job={job!r}, but the only valid jobs are {', '.join(map(repr, JOBS))}.")
    if not (isinstance(timeout, (int, float)) and timeout > 0):
        raise ParameterError(f"Got timeout={timeout!r}, but it must be a number of seconds > 0.")
    with tempfile.TemporaryDirectory(prefix="fpa-worker-") as folder:
        folder = pathlib.Path(folder)
        (folder / "job.json").write_text(records.dumps({"job": job, "kwargs": kwargs}))
        watch = _Watch(folder, timeout, on_event)
        watch.run()
        output = _captured(folder)
        return watch.outcome(output)


class _Watch:
    """One child process from start to exit: its events, its deadline, its fate."""

    def __init__(self, folder: pathlib.Path, timeout: float, on_event):
        self.folder, self.timeout, self.on_event = folder, timeout, on_event
        self.calls: list[dict] = []  # the user calls the child is inside, outermost first
        self.last_call: dict | None = None
        self.user_seconds = 0.0
        self.timed_out: dict | None = None
        self.returncode: int | None = None
        self.seconds = 0.0

    def run(self) -> None:
        read_end, write_end = os.pipe()
        env = dict(os.environ)
        env[_CHANNEL_ENV] = str(write_end)
        env["PYTHONUNBUFFERED"] = "1"  # what the user's code printed before a crash is in the files
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_package_root()), env.get("PYTHONPATH")]))
        start = time.monotonic()
        with open(self.folder / "stdout", "wb") as out, open(self.folder / "stderr", "wb") as err:
            try:
                proc = subprocess.Popen(
                    [sys.executable, "-c", _CHILD_COMMAND, str(self.folder)],
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    env=env,
                    pass_fds=(write_end,),
                    start_new_session=True,  # its own process group: a timeout kills what it started too
                )
            finally:
                os.close(write_end)
        try:
            self._follow(proc, read_end)
        finally:  # on Ctrl-C or an error of ours too: neither the child nor what it started outlives us
            _kill_group(proc)
            proc.wait()
            os.close(read_end)
        self.returncode = proc.returncode
        self.seconds = time.monotonic() - start

    def _follow(self, proc: subprocess.Popen, read_end: int) -> None:
        pending = b""
        open_pipe = True
        while True:
            wait = 0.5
            if self.calls:
                left = self.calls[0]["started"] + self.timeout - time.monotonic()
                if left <= 0:
                    self.timed_out = dict(self.calls[-1])
                    return
                wait = min(wait, left)
            if open_pipe:
                ready, _, _ = select.select([read_end], [], [], wait)
                if ready:
                    chunk = os.read(read_end, 65536)
                    if not chunk:
                        open_pipe = False
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        self._event(line)
            else:
                time.sleep(wait)
            if proc.poll() is not None and not (open_pipe and select.select([read_end], [], [], 0)[0]):
                return

    def _event(self, line: bytes) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            return  # not one of ours
        now = time.monotonic()
        if event.get("event") == "enter":
            event["started"] = now
            self.calls.append(event)
            self.last_call = event
        elif event.get("event") == "leave" and self.calls:
            call = self.calls.pop()
            if not self.calls:
                self.user_seconds += now - call["started"]
        if self.on_event is not None:
            self.on_event(event)

    def outcome(self, output: CapturedOutput) -> JobResult:
        if self.calls:  # the child ended inside a user call: account for its time
            self.user_seconds += time.monotonic() - self.calls[0]["started"]
        result = JobResult({}, output, self.seconds, self.user_seconds)
        worker = result.worker_record()
        if self.timed_out is not None:
            call = self.timed_out
            raise _user_error(
                f"{call['where']} did not return within {self.timeout:g} s (--timeout); the worker was killed",
                call,
                "timed_out",
                worker,
                {"timeout_s": self.timeout},
            )
        result_path = self.folder / "result.json"
        if result_path.exists():
            record = json.loads(result_path.read_text())
            if "value" in record:
                return dataclasses.replace(result, value=record["value"])
            raise _error_from_record(record["error"], worker)
        code = self.returncode
        how = f"was killed by {_signal_name(-code)}" if code is not None and code < 0 else f"exited with status {code}"
        fate = "killed" if code is not None and code < 0 else "exited"
        if self.calls:
            call = self.calls[-1]
            raise _user_error(f"{call['where']}: the process {how}", call, fate, worker, {"status": code})
        where = f" (last call into the user's code: {self.last_call['where']})" if self.last_call else ""
        raise InternalError(
            f"the worker process {how} outside the user's code{where}; its stderr ends: "
            f"{output.stderr.strip().splitlines()[-1] if output.stderr.strip() else '(nothing)'}"
        )


def _user_error(message: str, call: dict, fate: str, worker: dict, extra: dict) -> UserCodeError:
    details = {k: v for k, v in call.items() if k not in ("event", "where", "side", "started")}
    details.update(extra)
    details["worker"] = worker
    return UserCodeError(message, side=call.get("side", "?"), where=call["where"], fate=fate, details=details)


def _error_from_record(error: dict, worker: dict) -> FpaError:
    kind = error.get("kind")
    if kind == "user_code":
        details = {k: v for k, v in error.items() if k not in ("kind", "message", "side", "where", "fate")}
        details["worker"] = worker
        return UserCodeError(
            error["message"], side=error["side"], where=error["where"], fate=error["fate"], details=details
        )
    if kind == "usage":
        return FpaError(error["message"])
    return InternalError(error.get("message", "the worker failed"), error.get("traceback", ""))


def _captured(folder: pathlib.Path) -> CapturedOutput:
    texts, sizes = [], []
    for name in ("stdout", "stderr"):
        path = folder / name
        size = path.stat().st_size if path.exists() else 0
        with open(path, "rb") as f:
            if size <= 2 * _KEEP_BYTES:
                data = f.read()
            else:
                head = f.read(_KEEP_BYTES)
                f.seek(size - _KEEP_BYTES)
                data = head + f"\n[… {size - 2 * _KEEP_BYTES} bytes left out …]\n".encode() + f.read()
        texts.append(data.decode("utf-8", errors="replace"))
        sizes.append(size)
    return CapturedOutput(texts[0], texts[1], sizes[0], sizes[1])


def _kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _package_root() -> pathlib.Path:
    """The folder holding this ``fp_analysis``, so the child imports the same copy as the parent."""
    return pathlib.Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------------------------------- child side


def report_event(event: str, **fields) -> None:
    """Tell the parent where the child is (``enter``/``leave`` a user call, ``progress``); a no-op outside a worker."""
    if _channel is None:
        return
    with contextlib.suppress(OSError, ValueError):
        _channel.write(records.dumps({"event": event, **fields}, indent=None) + "\n")
        _channel.flush()


def child_main(folder: str) -> None:
    """The child's whole life: read the job, run it, write the result, leave (see the module docstring)."""
    global _channel
    folder = pathlib.Path(folder)
    import faulthandler
    import traceback

    _channel = os.fdopen(int(os.environ.pop(_CHANNEL_ENV)), "w", buffering=1)
    faulthandler.enable()  # a segfault in the user's extension leaves a Python traceback in stderr
    job = json.loads((folder / "job.json").read_text())
    try:
        module, function = JOBS[job["job"]]
        value = getattr(importlib.import_module(module), function)(**job["kwargs"])
        record = {"value": value}
    except UserCodeError as error:
        record = {"error": {"kind": "user_code", "message": str(error), **error.to_dict()}}
    except InternalError as error:
        record = {"error": {"kind": "internal", "message": str(error), "traceback": error.traceback}}
    except FpaError as error:
        record = {"error": {"kind": "usage", "message": str(error)}}
    except BaseException as error:  # whatever it is, the parent must learn of it
        message = f"{type(error).__name__}: {error}"
        record = {"error": {"kind": "internal", "message": message, "traceback": traceback.format_exc()}}
    tmp = folder / "result.json.part"
    tmp.write_text(records.dumps(record))
    os.replace(tmp, folder / "result.json")
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)
