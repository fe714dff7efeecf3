"""The fork server's protocol, and the requester's end of it: how a process gets its children forked warm.

Every job runs the user's code in two fresh processes (``fp_analysis.run.worker``: the worker, which runs the
problem and the analysis; ``fp_analysis.run.candidate``: the candidate process, which runs the solution), and a
fresh interpreter pays ``import torch`` and our job modules: seconds of CPU on a small machine, twice a job, most
of a small job's time. Forked from a process that has imported them, a child starts in milliseconds in the same
state a fresh interpreter would reach.

The server's own process (``fp_analysis.run.forkserver_loop``) does nothing but fork, and each child it forks makes
itself look like the ``python -c`` child it replaces; the one piece of torch it runs itself is its warm-up
(``fp_analysis.run.forkserver_warmup``), and ``fp_analysis.run.forkserver_check`` is the target that compares a
forked child with a fresh one. This module is the requester's end: the protocol, the connection to the server,
the children seen through it. If the server dies, the children it started keep running, but their ends are lost
(``ForkedProcess.lost``): ``children.ChildProcess`` reports that as an internal error, and the next request starts
a new server.

The protocol, over ``AF_UNIX``/``SOCK_SEQPACKET`` socket pairs (one message per request, file descriptors
travelling with it as ``SCM_RIGHTS``):

* a request names a target from ``TARGETS`` (nothing else can be run), its string arguments, the
  environment, the folder, and carries the child's stdout, stderr, a *status* socket and the descriptors
  to pass on;
* the server forks and answers on the status socket with the child's pid; when it reaps the child it
  sends the raw wait status there and closes it. So any thread, or process, holding the status socket can
  wait for the child (``ForkedProcess``, whose ``pid/poll/wait/kill/returncode`` are ``Popen``'s);
* a worker is given a connection of its own (``ChildSpec.serve_forks``), through which it asks for
  its candidate process; a process started any other way has none and starts its children with
  ``subprocess`` (``ChildProcess`` falls back to it whenever ``spawn`` returns None).

The server is started on first use by the process that supervises jobs (the CLI, a test, triage), or ahead of
it (``prestart``: ``fpa explain`` launches it first thing, so that its own start overlaps the server's), and ends
when that process ends (it watches a pipe whose write end only its starter holds). Set
``FPA_FORK_SERVER=0`` to start every child as a fresh interpreter instead.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import json
import os
import pathlib
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence

__all__ = [
    "MAX_MESSAGE",
    "TARGETS",
    "ChildSpec",
    "ForkServer",
    "ForkedProcess",
    "child_started",
    "prestart",
    "resume",
    "spawn",
    "target_command",
]

# What a child can be asked to run: name → (module, function). The function takes the child's arguments
# as strings, like a ``python -c`` child's ``sys.argv[1:]``.
TARGETS = {
    "worker": ("fp_analysis.run.worker", "child_main"),
    "candidate": ("fp_analysis.run.candidate", "serve"),
    "extension_build": ("fp_analysis.run.extension_build", "main"),
    "describe": ("fp_analysis.run.forkserver_check", "describe"),
}

# Environment variables read when the server's preloads are imported (so a child forked from a server started
# under other values would not match a fresh interpreter): a change starts a new server. Variables read
# later (CUDA_VISIBLE_DEVICES at CUDA's start, TORCH_EXTENSIONS_DIR at a build) are per child.
_IMPORT_TIME_ENV = (
    "PYTHONPATH",
    "PYTHONHASHSEED",
    "PYTHONNOUSERSITE",
    "PYTHONSAFEPATH",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
)

MAX_MESSAGE = 1 << 20  # bytes of one message either way
_DISABLE_ENV = "FPA_FORK_SERVER"
_CONNECTION_ENV = "FPA_FORK_SERVER_FD"  # a worker's own connection to the server
_START_S = 600.0  # seconds the server may take to import its preloads (ours, not the user's code)

_SERVER_COMMAND = (
    "import sys; sys.path[:] = [p for p in sys.path if p]; "
    "from fp_analysis.run.forkserver_loop import serve; serve(int(sys.argv[1]), int(sys.argv[2]))"
)


def target_command(target: str) -> str:
    """The ``python -c`` code that runs ``target`` in a fresh interpreter (``ChildProcess``'s fallback).

    The empty entry ``-c`` puts first on ``sys.path`` (the current folder) goes: the user's files see their
    own folders only, as they would under KernelBench.
    """
    module, function = TARGETS[target]
    return (
        "import sys; sys.path[:] = [p for p in sys.path if p]; "
        f"from {module} import {function}; {function}(*sys.argv[1:])"
    )


@dataclasses.dataclass(frozen=True)
class ChildSpec:
    """A child to start: ``TARGETS[target](*args)``, its stdout and stderr descriptors, the descriptors passed on
    at their numbers, its whole environment; ``serve_forks``: it gets a connection of its own to the server,
    its number in ``FPA_FORK_SERVER_FD``, to ask for children in turn."""

    target: str
    args: Sequence[str]
    stdout: int
    stderr: int
    pass_fds: Sequence[int]
    env: dict[str, str]
    serve_forks: bool = False
    preload: tuple[str, ...] = ()  # modules the child will import: the server imports them first, once


class ForkServerError(RuntimeError):
    """The fork server cannot start a child (it did not start, or it ended)."""


class ForkServerStartError(ForkServerError):
    """The fork server did not start (its imports failed, or took over ``_START_S``)."""


class ForkedProcess:
    """A child the fork server started, seen through its status socket; ``Popen``'s interface.

    ``returncode`` is None while it runs, then the exit status, or minus the signal that killed it. If the
    server ends first, the status is lost: ``lost`` becomes True and ``returncode`` stays None.
    """

    def __init__(self, pid: int, status: socket.socket):
        self.pid, self._status = pid, status
        self.returncode: int | None = None
        self.lost = False

    def _read(self) -> None:
        with contextlib.suppress(OSError):
            data = self._status.recv(64)
            if data:
                self.returncode = os.waitstatus_to_exitcode(int(data))
        if self.returncode is None:
            self.lost = True
        self._status.close()

    def poll(self) -> int | None:
        if self.returncode is None and not self.lost and select.select([self._status], [], [], 0)[0]:
            self._read()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        if self.returncode is None and not self.lost:
            if not select.select([self._status], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout)
            self._read()
        return self.returncode

    def gone(self) -> bool:
        """Whether a lost child has ended all the same (how, nobody can say): no process, or a zombie left to
        whoever adopted it. A child whose server still lives is never ``gone``: ``poll`` says when it ends."""
        if not self.lost:
            return False
        try:
            state = pathlib.Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        return state in ("Z", "X")

    def kill(self) -> None:
        if self.poll() is None and not self.lost:  # a reaped pid may already belong to another process
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)


class ForkServer:
    """The requester's end of a connection to a fork server."""

    def __init__(self, connection: socket.socket, alive: int | None = None, process=None):
        self._connection = connection
        self._alive = alive  # the write end of the pipe the server watches: closing it ends the server
        self._process = process
        self._lock = threading.Lock()  # triage asks from several threads
        self._ready = process is None  # a server this process launched is ready once it has said so
        self._failed: str | None = None  # why it did not start, once known
        self.abandoned = False  # True once a wait for its start was interrupted and it was ended

    @classmethod
    def launch(cls, env: dict[str, str]) -> ForkServer:
        """Start a server under ``env`` without waiting for it: the first ``spawn`` waits until it is ready, so
        whatever the requester does meanwhile overlaps the server's imports."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        alive_read, alive_write = os.pipe()
        try:
            process = subprocess.Popen(
                [sys.executable, "-c", _SERVER_COMMAND, str(theirs.fileno()), str(alive_read)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                # the children's sys.stdout/stderr are the server's; OMP_NUM_THREADS is each child's
                # (``forkserver_loop._become``)
                env={**{k: v for k, v in env.items() if k != "OMP_NUM_THREADS"}, "PYTHONUNBUFFERED": "1"},
                pass_fds=(theirs.fileno(), alive_read),
                start_new_session=True,  # Ctrl-C in a terminal is for the supervisor, which ends the jobs
            )
        except BaseException:
            ours.close()
            os.close(alive_write)
            raise
        finally:
            theirs.close()
            os.close(alive_read)
        return cls(ours, alive_write, process)

    def _await_ready(self) -> None:
        """Wait (holding ``_lock``) until the server says it has started; ForkServerStartError if it did not, and
        ForkServerError if the wait was interrupted earlier (Ctrl-C: the server is then ended, not failed, so the
        requester's next child starts a new one)."""
        if self._ready:
            return
        if self.abandoned:
            raise ForkServerError("the fork server was ended while it started")
        if self._failed is None:
            try:
                if not select.select([self._connection], [], [], _START_S)[0]:
                    self._failed = f"the fork server did not start within {_START_S:g} s"
                else:
                    hello = json.loads(self._connection.recv(MAX_MESSAGE) or b'{"error": "it ended while starting"}')
                    self._ready = "error" not in hello
                    self._failed = None if self._ready else f"the fork server did not start: {hello['error']}"
            except Exception as error:  # an unreadable hello: a server that did not start, like the others
                self._failed = f"the fork server did not start: {type(error).__name__}: {error}"
            except BaseException:  # interrupted: end it now (it looks at its requester's end only once ready)
                self.abandoned = True
                with contextlib.suppress(OSError):
                    self._process.kill()
                self.close()
                raise
        if self._failed is not None:
            self.close()
            raise ForkServerStartError(self._failed)

    def spawn(self, child: ChildSpec) -> ForkedProcess:
        """Fork ``child`` (once the server is ready); see the module docstring for what it gets."""
        status, status_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        own = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET) if child.serve_forks else None
        try:
            passed, env = list(child.pass_fds), child.env
            if own is not None:
                passed.append(own[1].fileno())
                env = {**env, _CONNECTION_ENV: str(own[1].fileno())}
            request = {"target": child.target, "args": list(child.args), "env": env, "cwd": os.getcwd(), "fds": passed,
                       "preload": list(child.preload)}  # fmt: skip
            fds = [child.stdout, child.stderr, status_theirs.fileno(), *passed]
            if own is not None:
                request["connection"] = len(fds)
                fds.append(own[0].fileno())
            with self._lock:
                self._await_ready()
                try:
                    socket.send_fds(self._connection, [json.dumps(request).encode()], fds)
                except OSError as error:
                    raise ForkServerError(f"the fork server is gone ({error})") from None
        finally:
            status_theirs.close()
            if own is not None:
                own[0].close()
                own[1].close()
        deadline = time.monotonic() + _START_S
        while not select.select([status], [], [], 1.0)[0]:
            self.resume()
            if time.monotonic() > deadline:
                status.close()
                raise ForkServerError("the fork server did not answer")
        answer = status.recv(64)
        if not answer:
            status.close()
            raise ForkServerError("the fork server ended without starting the child")
        return ForkedProcess(int(answer), status)

    def resume(self) -> None:
        """SIGCONT the server this process started, if something stopped it (``hardening.resume_if_stopped``)."""
        if self._process is not None:
            from .hardening import resume_if_stopped

            resume_if_stopped(self._process.pid)

    def close(self) -> None:
        """Let go of the server; the one this process started ends."""
        self._connection.close()
        if self._alive is not None:
            with contextlib.suppress(OSError):
                os.close(self._alive)
            self._alive = None
        if self._process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(5)


# ----------------------------------------------------------------------------- the requester's server

_state_lock = threading.Lock()
_server: ForkServer | None = None
_server_key: tuple | None = None
_failed_key: tuple | None = None  # a key under which the server failed to start: not tried again
# Servers replaced after the import-time environment changed: kept (not closed) while this process lives, since
# children they started may still run, and only their server can say how those end.
_retired: list[ForkServer] = []
_may_start = True  # False in the processes the jobs run in: they use the connection they were given


def child_started() -> None:
    """Called first by every job process: take the connection to the server it was given, if any, and
    never start a server of its own (its children come from its parent's server or from ``subprocess``)."""
    global _server, _server_key, _may_start
    _may_start = False
    _server = _server_key = None
    fd = os.environ.pop(_CONNECTION_ENV, None)
    if fd is not None:
        with contextlib.suppress(OSError, ValueError):
            _server = ForkServer(socket.socket(fileno=int(fd)))
            _server_key = "inherited"


def _current(env: dict[str, str]) -> ForkServer | None:
    """(Holding ``_state_lock``.) This process's server for children of ``env``: the one it was given, or the one
    it launched under the same import-time environment, launched now if there is none (not waited for); None
    where it may not start one or one failed to start under this environment."""
    global _server, _server_key, _failed_key
    if _may_start:
        key = tuple(env.get(name) for name in _IMPORT_TIME_ENV)
        if _server is not None and _server_key != key:
            _retired.append(_server)
            _server = None
        if _server is None and key != _failed_key:
            try:
                _server, _server_key = ForkServer.launch(env), key
            except OSError:
                _failed_key = key
    return _server


def prestart(env: dict[str, str]) -> None:
    """Launch the fork server for children of ``env`` now, without waiting for it: what the requester does before
    its first ``spawn`` (importing the rest of itself, checking its files) overlaps the server's imports. One that
    no child was asked of by the time this process ends is ended with it (``_end_unused``)."""
    if env.get(_DISABLE_ENV) != "0":
        with _state_lock:
            if _current(env) is not None:
                atexit.unregister(_end_unused)  # so that it is registered once, however often this is called
                atexit.register(_end_unused)


def _end_unused() -> None:
    """At exit: end a server launched ahead that no child was asked of (its command stopped at a bad argument
    first). It would otherwise go on importing torch for seconds after its requester ended, as it looks at its
    requester's end only once ready."""
    server = _server
    if server is not None and not server._ready and server._process is not None:
        with contextlib.suppress(OSError):
            server._process.kill()
        server.close()


def resume() -> None:
    """SIGCONT this process's fork server if something stopped it: a job waiting on it would wait for ever."""
    server = _server
    if server is not None:
        server.resume()


def spawn(child: ChildSpec) -> ForkedProcess | None:
    """Start ``child`` through this process's fork server (started on first use); None where there is none
    (``FPA_FORK_SERVER=0``, a process given no connection, a server that cannot start): then the caller starts
    a fresh interpreter itself."""
    global _server, _failed_key
    if child.env.get(_DISABLE_ENV) == "0":
        return None
    with _state_lock:
        server, key = _current(child.env), _server_key
    if server is None:
        return None
    try:
        return server.spawn(child)
    except ForkServerError as error:
        with _state_lock:
            if _server is server:
                _server = None
                if isinstance(error, ForkServerStartError):
                    _failed_key = key  # not tried again under this environment
        with contextlib.suppress(OSError):
            server.close()
        return None
    except BaseException:  # Ctrl-C while it started: the next child starts a new server
        with _state_lock:
            if _server is server and server.abandoned:
                _server = None
        raise
