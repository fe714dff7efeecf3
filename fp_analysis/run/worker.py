"""Running a job on the user's code in child processes: a timeout per call, output captured, each fate named.

``fpa explain`` and ``fpa fuzz`` import and run files the user gives them, and such code may print,
exit, hang, crash or change the state of the process it runs in. So this process only supervises; the
job runs in two children, one per side of the user's pair:

* the **worker** (``child_main``) imports the problem file, runs the reference ``Model`` and the analysis;
* the **candidate process** (``fp_analysis.run.candidate``), started by the worker, imports the solution file
  and runs ``ModelNew`` on request. Nothing the solution does — replacing a torch function, switching
  TF32, importing a ``common`` module of its own — can reach the reference or the analysis.

Both are forked from the fork server (``fp_analysis.run.forkserver``), which has imported torch, or started as
fresh interpreters where there is none; the child cannot tell the difference.

What every child gets (``ChildProcess``, ``child_setup``):

* **Output captured.** Its stdout and stderr (file descriptors 1 and 2, so a compiler that ``load_inline``
  runs is captured too) go to files, at most ``OUTPUT_LIMIT_BYTES`` each (the file-size limit of the
  process: beyond it the kernel ends the child with SIGXFSZ); the parent keeps the head and tail of each
  and never mixes them into its own output, so ``--json`` stays ours alone.
* **A session of its own**, so a kill takes what the child started (compilers) with it; and a thread
  that ends the child and its group when its parent dies, however the parent dies.
* **A clean ``sys.path``**: not the current folder (``python -c`` would put it first), so the user's files
  see their own folders only, as they would under KernelBench.

Where the worker is: it reports each call into the user's code as it enters and leaves it
(``report_event``, over a pipe of its own), so the parent can enforce the timeout — each call into the
user's code must return within ``timeout`` seconds; fp_analysis's own work between calls has no deadline
and reports progress instead — and name whatever ends the worker ("Model.__init__: killed by SIGSEGV").
Calls into the solution are timed by the worker itself, which learns more (the candidate process's
output); the parent's deadline for them is later by ``_SOLUTION_GRACE_S``.

The worker writes its result (or the error that stopped it) as strict JSON to a file, published by
rename, then leaves with ``os._exit`` so that threads or ``atexit`` handlers the user's code left behind
cannot hold it. The result is signed (HMAC-SHA256) with a key the parent hands the worker through a pipe, which
the worker reads and closes before any user code runs: the user's code can reach the job's folder, not the key,
so a result it wrote there is not taken for the worker's. The parent raises what stopped the job:
``UserCodeError`` (exit 3) when the user's code raised, exited, was killed, timed out or returned the wrong
thing; ``FpaError`` (exit 2) for a usage error the job found (a Model out of scope, say); ``InternalError``
(exit 4) otherwise, with the child's traceback.

This module does not import torch: the parent that only supervises starts fast.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hmac
import importlib
import json
import os
import pathlib
import secrets
import select
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence

from .. import records
from ..errors import Fate, FpaError, InternalError, OutOfScopeError, ParameterError, Side, UserCodeError
from . import forkserver, hardening
from .interrupts import signal_name, terminate_as_interrupt

__all__ = [
    "CHANNEL_LOST_STATUS",
    "DEFAULT_TIMEOUT_S",
    "OUTPUT_LIMIT_BYTES",
    "CapturedOutput",
    "ChildProcess",
    "JobResult",
    "child_main",
    "child_setup",
    "report_event",
    "run_job",
]

# Seconds one call into the user's code may take. A full-size KernelBench forward on a 2-core CPU takes
# up to 79 s (shared/facts/kernelbench_conv_families.md) and a load_inline build about a minute, so 300 s
# stops a hang without stopping real work.
DEFAULT_TIMEOUT_S = 300.0

# Bytes a child may write to any one file (RLIMIT_FSIZE): its stdout and stderr files included. A hung
# kernel printing in a loop stops here instead of filling the disk; extension builds stay far below.
OUTPUT_LIMIT_BYTES = 2 * 10**9

# The status a child leaves with when the user's code has closed the descriptors fpa talks to it through (its
# channel, or the pipe that tells it its parent is alive): named as that, not as a crash with a traceback of ours.
CHANNEL_LOST_STATUS = 86

# The jobs a worker runs: name → (module, function). A function takes keyword arguments that are JSON
# data and returns JSON data.
JOBS = {
    "explain": ("fp_analysis.explain.job", "explain_job"),
    "fuzz": ("fp_analysis.fuzz.search", "fuzz_job"),
    "replay": ("fp_analysis.fuzz.search", "replay_job"),
    "prepare": ("fp_analysis.run.candidate", "prepare_job"),
}

# Jobs whose processes (the worker and the candidate it starts) run torch on one thread: a fuzz example is
# small, so threads gain nothing, and several jobs at once (tests on every core, triage) each spinning an
# OpenMP pool on the same cores were measured 2–5× slower (OMP_NUM_THREADS=1: 7 fuzz tests on 2 cores,
# 150 s → 40 s). A user's own OMP_NUM_THREADS is kept.
_ONE_THREAD_JOBS = frozenset({"fuzz", "replay"})

# How much of each captured stream is kept: its first and last this many bytes.
_KEEP_BYTES = 16_384

# Bytes a worker's result may hold (an explanation's is a few hundred kB).
_RESULT_BYTES = 256 * 2**20

# Seconds to wait for a killed child's end to be reported (by the fork server, where it was forked).
_REAP_S = 10.0

# The worker times calls into the solution itself (it learns the candidate process's fate); the parent
# steps in only this much later, if the worker itself is stuck.
_SOLUTION_GRACE_S = 15.0

_CHANNEL_ENV = "FPA_WORKER_FD"
_KEY_ENV = "FPA_KEY_FD"  # the pipe the worker reads its result's signing key from (never a file: see run_job)
_PARENT_ENV = "FPA_PARENT_FD"
_channel = None  # the worker's end of the event pipe; None outside a worker
_owner_pid = None  # the worker's pid: a process the user's code forks must not speak for it
_channel_lock = threading.Lock()  # run_check draws the next trial's inputs in a thread


@dataclasses.dataclass(frozen=True)
class CapturedOutput:
    """What a child process wrote to stdout and stderr: head and tail of each, and the full sizes."""

    stdout: str
    stderr: str
    stdout_bytes: int
    stderr_bytes: int

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def read(cls, folder: pathlib.Path, name: str) -> CapturedOutput:
        """The output of the child ``name`` whose files are in ``folder`` (empty where there are none)."""
        texts, sizes = [], []
        for stream in ("stdout", "stderr"):
            path = folder / f"{name}.{stream}"
            size = path.stat().st_size if path.exists() else 0
            data = b""
            if size:
                with open(path, "rb") as f:
                    if size <= 2 * _KEEP_BYTES:
                        data = f.read()
                    else:
                        head = f.read(_KEEP_BYTES)
                        f.seek(size - _KEEP_BYTES)
                        data = head + f"\n[… {size - 2 * _KEEP_BYTES} bytes left out …]\n".encode() + f.read()
            texts.append(data.decode("utf-8", errors="replace"))
            sizes.append(size)
        return cls(texts[0], texts[1], sizes[0], sizes[1])

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
    """A finished job: its value and how the children ran."""

    value: dict
    output: dict[str, CapturedOutput]  # per side: "problem" (the worker) and "solution" (the candidate process)
    seconds: float  # wall time of the worker, start to exit
    user_seconds: float  # of which inside calls into the user's code
    # torch's CUDA and cuDNN versions as the worker saw them, for the results store: the supervisor need not
    # import torch (2 s on a small machine) to record them
    versions: dict = dataclasses.field(default_factory=dict)

    def worker_record(self) -> dict:
        """The ``worker`` block of ``--json``: time spent, what each side's process printed, torch's versions."""
        return {
            "seconds": self.seconds,
            "user_code_seconds": self.user_seconds,
            **{side: output.to_dict() for side, output in self.output.items()},
            "versions": self.versions,
        }


# ------------------------------------------------------------------------------------------- children


class ChildProcess:
    """A Python child running ``forkserver.TARGETS[target](*args)`` in a session of its own, its output in
    ``folder/name.{stdout,stderr}``.

    It is forked from the fork server where there is one (``fp_analysis.run.forkserver``: no ``import torch``
    to wait for) and started as a fresh interpreter otherwise; the two are the same to the child and to
    this class. It is ended with its group (``kill``) on ``close``, and by itself when this process dies
    (``child_setup``'s watch on the pipe whose write end only this process holds). ``serve_forks``: the
    child may ask the fork server for children of its own (a worker, for its candidate process); ``preload``:
    modules it will import, which the fork server imports first (once for all the jobs of a kind).
    """

    def __init__(
        self,
        target: str,
        args: Sequence[str],
        folder: pathlib.Path,
        name: str,
        pass_fds: Sequence[int] = (),
        env: dict[str, str] | None = None,
        serve_forks: bool = False,
        preload: Sequence[str] = (),
    ):
        self.folder, self.name = folder, name
        alive_read, self._alive = os.pipe()
        env = {**_child_env(env), _PARENT_ENV: str(alive_read)}
        args = [str(a) for a in args]
        try:
            with open(folder / f"{name}.stdout", "wb") as out, open(folder / f"{name}.stderr", "wb") as err:
                fds = (alive_read, *pass_fds)
                spec = forkserver.ChildSpec(
                    target, args, out.fileno(), err.fileno(), fds, env, serve_forks, tuple(preload)
                )
                self.proc = forkserver.spawn(spec) or subprocess.Popen(
                    [sys.executable, "-c", forkserver.target_command(target), *args],
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    env=env,
                    pass_fds=fds,
                    start_new_session=True,
                )
        except BaseException:
            os.close(self._alive)
            raise
        finally:
            os.close(alive_read)
        self.started = time.monotonic()

    def kill(self) -> None:
        """SIGKILL to the child's whole group (what it started too)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()

    def close(self) -> None:
        """Kill the child's group if anything of it is left, reap it (or wait ``_REAP_S`` for its reaper, the fork
        server, to say so: one the user's code stopped never would), and let go of the pipe."""
        self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(_REAP_S)
        with contextlib.suppress(OSError):
            os.close(self._alive)

    def has_ended(self) -> bool:
        """Whether the child has ended; one whose fork server died first, once it is gone (``ForkedProcess.gone``)."""
        if self.proc.poll() is not None:
            return True
        return isinstance(self.proc, forkserver.ForkedProcess) and self.proc.gone()

    def wait_ended(self, timeout: float) -> None:
        """Return once the child has ended or after ``timeout`` seconds, whichever is first."""
        if isinstance(self.proc, forkserver.ForkedProcess) and self.proc.lost:
            time.sleep(timeout)  # nobody will report its end: ``has_ended`` looks at /proc instead
            return
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout)

    def ending(self) -> tuple[Fate, str, int | None]:
        """How the child ended: (fate, 'exited with status 3' / 'was killed by SIGSEGV', return code)."""
        try:
            code = self.proc.wait(_REAP_S)
        except subprocess.TimeoutExpired:  # its reaper, the fork server, does not answer (stopped, say)
            self.kill()
            return Fate.KILLED, "ended, and its end was not reported in time", None
        if code is None:  # a forked child whose fork server ended first: nobody saw how it ended
            raise InternalError(f"the fork server ended before the {self.name} process, so its end is unknown")
        if code < 0:
            return Fate.KILLED, f"was killed by {signal_name(-code)}", code
        return Fate.EXITED, f"exited with status {code}", code

    def output(self) -> CapturedOutput:
        return CapturedOutput.read(self.folder, self.name)


def _child_env(extra: dict[str, str] | None) -> dict[str, str]:
    """The environment of a child started with ``extra`` (but for its own pipe's number): this process's, our
    package first on its module path, output unbuffered (what the user's code printed before a crash is in the
    files)."""
    env = {**os.environ, **(extra or {}), "PYTHONUNBUFFERED": "1"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_package_root()), env.get("PYTHONPATH")]))
    return env


def start_fork_server(env: dict[str, str] | None = None) -> None:
    """Launch the fork server the jobs' processes (started with ``env``) will be forked from, without waiting for
    it (``forkserver.prestart``): a command calls this first, so its own imports and checks overlap the server's."""
    forkserver.prestart(_child_env(env))


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
    fd = int(os.environ.pop(_PARENT_ENV))

    def watch():
        try:
            os.read(fd, 1)
        except OSError:  # the user's code closed our pipe: the child can no longer learn of its parent's end
            os._exit(CHANNEL_LOST_STATUS)
        os.killpg(os.getpgrp(), signal.SIGKILL)

    threading.Thread(target=watch, name="fpa-parent-watch", daemon=True).start()


# ------------------------------------------------------------------------------------------ parent side


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
    with tempfile.TemporaryDirectory(prefix="fpa-worker-") as folder, terminate_as_interrupt():
        folder = pathlib.Path(folder)
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
                env={**self.env, _CHANNEL_ENV: str(write_end), _KEY_ENV: str(key_read)},
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


def _package_root() -> pathlib.Path:
    """The folder holding this ``fp_analysis``, so a child imports the same copy as its parent."""
    return pathlib.Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------------------------- worker side


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
    _channel = os.fdopen(int(os.environ.pop(_CHANNEL_ENV)), "w", buffering=1)
    job = json.loads((folder / "job.json").read_text())
    key_fd = int(os.environ.pop(_KEY_ENV))
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
