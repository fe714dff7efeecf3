"""Running a job on the user's code in child processes: a timeout per call, output captured, each fate named.

``fpa explain`` and ``fpa fuzz`` import and run files the user gives them, and such code may print,
exit, hang, crash or change the state of the process it runs in. So this process only supervises (``run_job``);
the job runs in two children, one per side of the user's pair:

* the **worker** (``fp_analysis.run.worker``) imports the problem file, runs the reference ``Model`` and the
  analysis;
* the **candidate process** (``fp_analysis.run.candidate``), started by the worker, imports the solution file
  and runs ``ModelNew`` on request. Nothing the solution does — replacing a torch function, switching
  TF32, importing a ``common`` module of its own — can reach the reference or the analysis.

Each is a ``children.ChildProcess``: its output captured, in a session of its own, ended with its parent.

Where the worker is: it reports each call into the user's code as it enters and leaves it
(``worker.report_event``, over a pipe of its own), so the parent can enforce the timeout — each call into the
user's code must return within ``timeout`` seconds; fp_analysis's own work between calls has no deadline
and reports progress instead — and name whatever ends the worker ("Model.__init__: killed by SIGSEGV").
Calls into the solution are timed by the worker itself, which learns more (the candidate process's
output); the parent's deadline for them is later by ``_SOLUTION_GRACE_S``.

The worker's result is signed with a key this process hands it through a pipe, so a result the user's code wrote
into the job's folder is not taken for the worker's. The parent raises what stopped the job:
``UserCodeError`` (exit 3) when the user's code raised, exited, was killed, timed out or returned the wrong
thing; ``FpaError`` (exit 2) for a usage error the job found (a Model out of scope, say); ``InternalError``
(exit 4) otherwise, with the child's traceback.

This module does not import torch: the parent that only supervises starts fast.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import hmac
import json
import os
import pathlib
import secrets
import select
import stat
import tempfile
import time
from collections.abc import Callable

from .. import records
from ..errors import Fate, FpaError, InternalError, OutOfScopeError, ParameterError, Side, UserCodeError
from ..options import DEFAULT_TIMEOUT_S
from . import forkserver, hardening
from .children import CapturedOutput, ChildProcess
from .interrupts import terminate_as_interrupt
from .places import remove_folder
from .worker import CHANNEL_ENV, JOBS, KEY_ENV

__all__ = ["JOB_FOLDER_PREFIX", "JobResult", "run_job"]

# The prefix of each job's folder in the temporary folder: the solution's own temporary folder is made in it.
JOB_FOLDER_PREFIX = "fpa-worker-"

# Jobs whose processes (the worker and the candidate it starts) run torch on one thread: a fuzz example is
# small, so threads gain nothing, and several jobs at once (tests on every core, triage) each spinning an
# OpenMP pool on the same cores were measured several times slower (OMP_NUM_THREADS=1, fuzz tests on 2 cores).
# A user's own OMP_NUM_THREADS is kept.
_ONE_THREAD_JOBS = frozenset({"fuzz", "replay"})

# Bytes a worker's result may hold (an explanation's is a few hundred kB).
_RESULT_BYTES = 256 * 2**20

# The worker times calls into the solution itself (it learns the candidate process's fate); the parent
# steps in only this much later, if the worker itself is stuck.
_SOLUTION_GRACE_S = 15.0


@dataclasses.dataclass(frozen=True)
class JobResult:
    """A finished job: its value and how the children ran."""

    value: dict
    output: dict[str, CapturedOutput]  # per side: "problem" (the worker) and "solution" (the candidate process)
    seconds: float  # wall time of the worker, start to exit
    user_seconds: float  # of which inside calls into the user's code
    # torch's CUDA and cuDNN versions as the worker saw them, for the results store: the supervisor need not
    # import torch (seconds on a small machine) to record them
    versions: dict = dataclasses.field(default_factory=dict)

    def worker_record(self) -> dict:
        """The ``worker`` block of ``--json``: time spent, what each side's process printed, torch's versions."""
        return {
            "seconds": self.seconds,
            "user_code_seconds": self.user_seconds,
            **{side: output.to_dict() for side, output in self.output.items()},
            "versions": self.versions,
        }


def run_job(
    job: str,
    kwargs: dict,
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    on_event: Callable[[dict], None] | None = None,
    env: dict[str, str] | None = None,
) -> JobResult:
    """Run ``JOBS[job](**kwargs, timeout=timeout)`` in a worker process and return its result; raise what stopped it.

    ``on_event`` sees every event the worker reports (``{"event": "enter", "where": ..., "side": ...,
    "detail": ...}``, ``"leave"``, ``"progress"``), for a progress display. Raises ``UserCodeError`` (its
    ``details["worker"]`` holds the time spent and the captured output), ``FpaError`` for a usage error the
    job found, ``InternalError`` otherwise. SIGTERM and SIGHUP end the job as Ctrl-C does, children included.
    ``env``: variables set for the job's processes only (``fpa triage``'s GPU per job and extensions folder).
    The calling process makes itself not dumpable (``hardening.not_dumpable``): it holds the key the result is
    signed with, and reads the result.
    """
    if job not in JOBS:
        raise ParameterError(f"Got job={job!r}, but the only valid jobs are {', '.join(map(repr, JOBS))}.")
    folder = pathlib.Path(tempfile.mkdtemp(prefix=JOB_FOLDER_PREFIX))
    # removed at the job's end, or at fpa's where it ends first (Ctrl-C in a triage, whose jobs run in threads); the
    # solution's temporary folder, inside it, too, whatever the user's code left there
    cleanup = functools.partial(remove_folder, folder)
    atexit.register(cleanup)
    try:
        return _supervised(job, kwargs, timeout, on_event, env, folder)
    finally:
        cleanup()
        atexit.unregister(cleanup)


def _supervised(job: str, kwargs: dict, timeout: float, on_event, env, folder: pathlib.Path) -> JobResult:
    """``run_job``'s work in its temporary ``folder``."""
    with terminate_as_interrupt():
        hardening.not_dumpable()  # this process holds the key and reads the result: out of the user's code's reach
        # json, not records: the paths must reach the worker as they are (a file name's undecodable bytes too)
        job_record = {"job": job, "kwargs": {**kwargs, "timeout": timeout}}
        (folder / "job.json").write_text(json.dumps(job_record, allow_nan=False))
        key = secrets.token_bytes(32)  # signs the worker's result; it travels by pipe, never through a file
        threads = {"OMP_NUM_THREADS": "1"} if job in _ONE_THREAD_JOBS and "OMP_NUM_THREADS" not in os.environ else {}
        watch = _Watch(folder, timeout, on_event, env={**threads, **(env or {})}, module=JOBS[job][0], key=key)
        watch.run()
        return watch.outcome()


class _Watch:
    """The worker from start to exit: its events, its deadlines, its fate."""

    def __init__(
        self,
        folder: pathlib.Path,
        timeout: float,
        on_event,
        env: dict[str, str] | None = None,
        module: str = "",
        key: bytes = b"",
    ):
        self.folder, self.timeout, self.on_event, self.module, self.key = folder, timeout, on_event, module, key
        self.env = dict(env or {})
        self.calls: dict[int, dict] = {}  # the user calls under way, by id (the two sides' may overlap)
        self.last_call: dict | None = None
        self.user_seconds = 0.0
        self.timed_out: dict | None = None
        self.seconds = 0.0
        self.child: ChildProcess | None = None

    def run(self) -> None:
        read_end, write_end = os.pipe()
        key_read, key_write = os.pipe()
        try:
            os.write(key_write, self.key)  # 32 bytes: the pipe holds them until the worker reads them
            self.child = ChildProcess(
                "worker",
                [str(self.folder)],
                self.folder,
                Side.PROBLEM.value,
                pass_fds=(write_end, key_read),
                env={**self.env, CHANNEL_ENV: str(write_end), KEY_ENV: str(key_read)},
                serve_forks=True,
                preload=(self.module,) if self.module else (),
            )
        finally:
            for fd in (write_end, key_read, key_write):
                os.close(fd)
        try:
            self._follow(read_end)
        finally:  # on Ctrl-C or an error of ours too: neither the worker nor what it started outlives us
            self.child.close()
            os.close(read_end)
        now = time.monotonic()
        self.user_seconds += sum(now - call["started"] for call in self.calls.values())  # ended inside a call
        self.seconds = now - self.child.started

    def _deadline(self) -> tuple[float, dict] | None:
        """The earliest moment a call under way overruns, and that call."""
        if not self.calls:
            return None

        def due(call):
            grace = _SOLUTION_GRACE_S if call.get("side") == Side.SOLUTION.value else 0.0
            return call["started"] + self.timeout + grace

        call = min(self.calls.values(), key=due)
        return due(call), call

    def _follow(self, read_end: int) -> None:
        pending = b""
        open_pipe = True
        while True:
            wait = 0.5
            deadline = self._deadline()
            if deadline is not None:
                left = deadline[0] - time.monotonic()
                if left <= 0:
                    self.timed_out = dict(deadline[1])
                    return
                wait = min(wait, left)
            if open_pipe:
                ready, _, _ = select.select([read_end], [], [], wait)
                if ready:
                    chunk = os.read(read_end, 65536)
                    open_pipe = bool(chunk)
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        self._event(line)
            else:
                self.child.wait_ended(wait)  # the pipe closes as the child exits: no fixed sleep after it
            if self.child.has_ended() and not (open_pipe and select.select([read_end], [], [], 0)[0]):
                return
            hardening.resume_if_stopped(self.child.proc.pid)  # never stopped on purpose: nor is the fork server
            forkserver.resume()

    def _event(self, line: bytes) -> None:
        try:
            event = records.safe_data(json.loads(line))
        except (ValueError, RecursionError):
            return  # not one of ours
        if not _is_event(event):
            return
        now = time.monotonic()
        if event.get("event") == "enter":
            event["started"] = now
            self.calls[event.get("id")] = event
            self.last_call = event
        elif event.get("event") == "leave" and (call := self.calls.pop(event.get("id"), None)) is not None:
            # the candidate process measures its own calls (its reply can wait while the worker works)
            self.user_seconds += event.get("seconds", now - call["started"])
        if self.on_event is not None:
            self.on_event(event)

    def outcome(self) -> JobResult:
        output = {side.value: CapturedOutput.read(self.folder, side.value) for side in Side}
        result = JobResult({}, output, self.seconds, self.user_seconds)
        worker = result.worker_record()
        if self.timed_out is not None:
            call = self.timed_out
            raise _user_error(
                f"{call['where']} did not return within {self.timeout:g} s (--timeout); it was killed",
                call,
                Fate.TIMED_OUT,
                worker,
                {"timeout_s": self.timeout},
            )
        result_path = self.folder / "result.json"
        if result_path.exists():
            record = self._signed(result_path, worker)
            if "value" in record:
                return dataclasses.replace(result, value=record["value"], versions=record.get("versions", {}))
            raise _error_from_record(record["error"], worker)
        fate, how, code = self.child.ending()
        if self.calls:
            call = self.last_call if self.last_call.get("id") in self.calls else next(iter(self.calls.values()))
            raise _user_error(f"{call['where']}: the process {how}", call, fate, worker, {"status": code})
        after = f"; the last call into the user's code was {self.last_call['where']}" if self.last_call else ""
        stderr = output[Side.PROBLEM.value].stderr
        raise InternalError(
            f"the worker process {how} outside the user's code{after}",
            f"the worker process {how}{after}.\nIts stderr:\n{stderr}",
        )

    def _signed(self, path: pathlib.Path, worker: dict) -> dict:
        """The worker's result record from ``path``, its signature checked (its text made safe to print and store);
        a result the worker did not write — the user's code can reach the folder, not the key — is a failure of
        the user's code."""
        try:
            signed = json.loads(_read_regular(path, _RESULT_BYTES))
            text = signed["record"].encode()
            if not hmac.compare_digest(hmac.new(self.key, text, "sha256").hexdigest(), signed["mac"]):
                raise ValueError("wrong signature")
            record = records.safe_data(json.loads(text))
            if not isinstance(record, dict) or not ("value" in record or isinstance(record.get("error"), dict)):
                raise ValueError("not a result")
            return record
        except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
            where = self.last_call["where"] if self.last_call else "the job"
            raise UserCodeError(
                "the job's result was not the one fpa's worker wrote: code of the user's changed the files of fpa's "
                "job folder",
                side=Side.SOLUTION,
                where=where,
                fate=Fate.MODIFIED_FILES,
                details={"worker": worker},
            ) from None


def _read_regular(path: pathlib.Path, limit: int) -> bytes:
    """The bytes of ``path`` if it is a regular file (not a link, a FIFO or a device: the user's code may have put
    one in its place) of at most ``limit`` bytes; OSError or ValueError otherwise."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(descriptor, "rb") as file:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            raise ValueError("not a regular file of a result's size")
        return file.read(limit + 1)[:limit]


def _is_event(event) -> bool:
    """Whether ``event`` is one the worker reports (``report_event``): the parent acts on no other."""
    return (
        isinstance(event, dict)
        and event.get("event") in ("enter", "leave", "progress")
        and isinstance(event.get("id", 0), int)
        and all(isinstance(event.get(k, ""), str) for k in ("where", "side", "detail", "replay", "text"))
        and isinstance(event.get("seconds", 0.0), (int, float))
        and (event["event"] != "enter" or isinstance(event.get("where"), str))
    )


def _user_error(message: str, call: dict, fate: Fate, worker: dict, extra: dict) -> UserCodeError:
    details = {k: v for k, v in call.items() if k not in ("event", "id", "where", "side", "started")}
    details.update(extra)
    details["worker"] = worker
    return UserCodeError(message, side=call.get("side", Side.PROBLEM), where=call["where"], fate=fate, details=details)


def _error_from_record(error: dict, worker: dict) -> FpaError:
    kind = error.pop("kind", None)
    if kind == "user_code":
        failure = UserCodeError.from_dict(error)
        failure.details["worker"] = worker
        return failure
    if kind == "out_of_scope":
        return OutOfScopeError(error["message"])
    if kind == "usage":
        return FpaError(error["message"])
    return InternalError(error.get("message", "the worker failed"), error.get("traceback", ""))
