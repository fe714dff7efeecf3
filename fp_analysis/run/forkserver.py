"""The fork server: one process with torch and the job modules imported forks the processes each job runs in.

Every job runs the user's code in two fresh processes (``fp_analysis.run.worker``: the worker, which runs the
problem and the analysis; ``fp_analysis.run.candidate``: the candidate process, which runs the solution), and a
fresh interpreter pays ``import torch`` and our job modules: about 2.5 s of CPU on the 2-core machine, so
five seconds a job, most of a small job's time. Forked from a process that has imported them, a child
starts in milliseconds in the same state a fresh interpreter would reach.

That holds because the server does nothing else: it never runs user code, runs torch only in a warm-up of its
own on one thread before it forks its second worker (``_warm_before``: no OpenMP thread pool exists to be lost in
the fork) and never touches CUDA
(a process that has initialised the CUDA driver cannot fork a child that uses it; the children initialise it
themselves). Each
forked child then makes itself look like the ``python -c`` child it replaces (``_become``): a session of its
own, the requester's environment, current folder and ``sys.argv``, the requester's file descriptors at the
same numbers (as ``subprocess.Popen(pass_fds=...)`` gives them) and no other, the signal dispositions of a
fresh interpreter, numpy's global generator reseeded (Python's ``random`` reseeds itself after a fork), and
``OMP_NUM_THREADS`` applied (the server is started without it, and each child sets its own thread count). Two
differences remain, by design: every child shares the server's string-hash seed (a fresh interpreter draws
its own unless ``PYTHONHASHSEED`` is set), and a child leaves with ``os._exit`` once its target returns or
raises, so ``atexit`` handlers the user's code registered do not run (the worker leaves that way anyway).

The server must survive whatever a job's code sends it: a request it cannot read (not JSON, a pipe where a
socket belongs, a target not in ``TARGETS``) is dropped with its descriptors, and a fork that fails is a
request not answered. If the server dies anyway, the children it started keep running, but their ends are
lost (``ForkedProcess.lost``): ``worker.ChildProcess`` reports that as an internal error, and the next request
starts a new server.

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
import fcntl
import importlib
import json
import os
import pathlib
import select
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Sequence

__all__ = [
    "TARGETS",
    "ChildSpec",
    "ForkServer",
    "ForkedProcess",
    "child_started",
    "describe",
    "prestart",
    "resume",
    "serve",
    "spawn",
    "target_command",
]

# What a child can be asked to run: name → (module, function). The function takes the child's arguments
# as strings, like a ``python -c`` child's ``sys.argv[1:]``.
TARGETS = {
    "worker": ("fp_analysis.run.worker", "child_main"),
    "candidate": ("fp_analysis.run.candidate", "serve"),
    "describe": ("fp_analysis.run.forkserver", "describe"),
}

# What the server imports before it forks anything: what the targets import first (torch, numpy, the candidate
# process's module, the explanation's). Its warm-up comes later (``_warm_before``).
_PRELOAD = ("torch", "numpy", "fp_analysis.run.candidate", "fp_analysis.explain.job")
# Modules a request may ask the server to import before it forks (``ChildSpec.preload``): a job's module, so that
# the first job of a kind pays its import in the server and every later one starts with it.
_MAY_PRELOAD = frozenset({"fp_analysis.explain.job", "fp_analysis.fuzz.search", "fp_analysis.run.candidate"})

# Environment variables read when those modules are imported (so a child forked from a server started
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

_DISABLE_ENV = "FPA_FORK_SERVER"
_CONNECTION_ENV = "FPA_FORK_SERVER_FD"  # a worker's own connection to the server
_START_S = 600.0  # seconds the server may take to import _PRELOAD (ours, not the user's code)
_MAX_MESSAGE = 1 << 20
_ADOPTED_SCAN_S = 1.0  # how often the server looks for orphans it adopted (_end_adopted)
_MAX_FDS = 64

_threads = 1  # in the server: torch's thread count for a process whose environment does not set one

_SERVER_COMMAND = (
    "import sys; sys.path[:] = [p for p in sys.path if p]; "
    "from fp_analysis.run.forkserver import serve; serve(int(sys.argv[1]), int(sys.argv[2]))"
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
                # the children's sys.stdout/stderr are the server's; OMP_NUM_THREADS is each child's (``_become``)
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
                    hello = json.loads(self._connection.recv(_MAX_MESSAGE) or b'{"error": "it ended while starting"}')
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


# --------------------------------------------------------------------------------------- the server


def serve(connection_fd: int, alive_fd: int) -> None:
    """The server's life: preload, say ready, then fork on request and report what its children became."""
    global _threads
    connection = socket.socket(fileno=connection_fd)
    from .hardening import adopt_orphans, not_dumpable

    not_dumpable()  # no job's code may write into the process every later job is forked from (hardening)
    adopt_orphans()  # and what it starts apart from its job ends here (_end_adopted)
    try:
        for module in _PRELOAD:
            importlib.import_module(module)
        _threads = sys.modules["torch"].get_num_threads()
    except BaseException as error:  # the requester falls back to fresh interpreters; it should know why
        with contextlib.suppress(OSError):
            connection.send(json.dumps({"error": f"{type(error).__name__}: {error}"}).encode())
        os._exit(1)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a Python handler, so SIGCHLD writes to the wakeup fd
    clients = [connection]
    statuses: dict[int, socket.socket] = {}  # child pid → its status socket
    connection.send(json.dumps({"ready": True}).encode())
    while True:
        ready = select.select([alive_fd, wake_read, *clients], [], [], _ADOPTED_SCAN_S)[0]
        _end_adopted(statuses)
        if alive_fd in ready:  # the requester has ended: so do we (the children watch their own parents)
            os._exit(0)
        if wake_read in ready:
            with contextlib.suppress(BlockingIOError):
                os.read(wake_read, 4096)
            _reap(statuses)
        for client in [c for c in clients if c in ready]:
            try:
                message, fds, _, _ = socket.recv_fds(client, _MAX_MESSAGE, _MAX_FDS)
            except OSError:
                message, fds = b"", []
            if not message:
                clients.remove(client)
                client.close()
                for fd in fds:
                    os.close(fd)
                continue
            keep = (connection, *clients, *statuses.values())
            try:
                started = _start(message, fds, keep)
            except Exception:  # a last guard: one request never ends the server that every job needs
                started = None
            if started is not None:
                pid, status, new_client = started
                statuses[pid] = status
                if new_client is not None:
                    clients.append(new_client)
        _reap(statuses)  # a child that ended between the select and now


_workers_forked = 0  # in the server: workers forked so far
_warmed = False


def _warm_before(target: str) -> None:
    """Warm up (``_warm_up``) before the second worker is forked, not when the server starts.

    A job loads what it uses itself, so the warm-up pays off only for the jobs forked after it: done at the
    start, it was on the way of every first job (1.0 s on the H200's host, 0.8–1.3 s on the 2-core CPU), and a
    single ``fpa explain`` whose analysis uses no twin (most on a GPU: the twins are for two plain fp32 sides)
    waited for it for nothing. Before the second worker, a session of many jobs (triage, fuzz, the tests) still
    forks all but its first warm. A warm-up that fails is not tried again: the children load what they need.
    """
    global _workers_forked, _warmed
    if target != "worker":
        return
    if _workers_forked and not _warmed:
        _warmed = True
        with contextlib.suppress(Exception):
            _warm_up()
    _workers_forked += 1


def _warm_up() -> None:
    """Run once, in the server, what jobs on a conv run first, so that the jobs forked after it (all but the first:
    ``_warm_before``) start warm: torch's first convolution, and numba's twins (``orders.accumulate``,
    ``arith.add32``: loading them from numba's cache takes a process 0.7–0.9 s), which the kernels' twins in
    ``fpa fuzz`` of a seed op compute with.

    On one torch thread, so that no OpenMP pool exists when the server forks (each child sets its own thread
    count, ``_become``); inside ``fork_rng`` so that torch's default generator is where a fresh interpreter's is;
    our own fixed code, never the user's. numba's compiler works in the forked children after this (checked:
    children compile new functions).
    """
    import numpy as np
    import torch

    from ..numerics.arith import add32
    from ..numerics.orders import AccumulationSpec, accumulate
    from ..ops.conv import gather_terms, sample_output_indices, spec_of_module

    torch.set_num_threads(1)
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        module = torch.nn.Conv2d(2, 3, 3)
        x = torch.rand(1, 2, 6, 6)
        y = module(x)
        index = sample_output_indices(tuple(y.shape), 8, 0)
        terms = gather_terms(spec_of_module(module), x, module.weight.detach(), module.bias.detach(), index)
        np.asarray(add32(accumulate(terms.w, terms.x, AccumulationSpec(), terms.bias), terms.bias))


def _end_adopted(statuses: dict[int, socket.socket]) -> None:
    """SIGKILL every child of the server that it did not fork: an orphan it adopted as the subreaper of its children's
    descendants (``hardening.adopt_orphans``), such as a daemon a solution left in a session of its own, which would
    otherwise outlive its job (and act on the next: edit its files, signal its processes). ``_reap`` collects them."""
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in statuses:
            continue
        try:
            parent = pathlib.Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[1]
        except (OSError, IndexError):
            continue
        if int(parent) == me:  # a zombie too: a leader that left by SYS_exit looks one while its threads run
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(name), signal.SIGKILL)


def _reap(statuses: dict[int, socket.socket]) -> None:
    """Collect every ended child and send its wait status to whoever holds its status socket."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        sock = statuses.pop(pid, None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.send(str(status).encode())
            sock.close()


def _start(message: bytes, fds: list[int], sockets) -> tuple[int, socket.socket, socket.socket | None] | None:
    """Fork the child ``message`` asks for; (pid, its status socket, a new client connection or None).

    A request that is not ours (a job's user code may write to a worker's connection) is dropped, its
    descriptors closed.
    """
    try:
        request = json.loads(message)
        module, function = TARGETS[request["target"]]
        args = [str(a) for a in request["args"]]
        env = {str(k): str(v) for k, v in request["env"].items()}
        cwd = str(request["cwd"])
        targets = [int(fd) for fd in request["fds"]]
        connection_index = request.get("connection")
        for name in request.get("preload", ()):
            if name in _MAY_PRELOAD and name not in sys.modules:
                importlib.import_module(name)
        _warm_before(request["target"])
        if len(fds) != 3 + len(targets) + (connection_index is not None) or any(fd < 3 for fd in targets):
            raise ValueError("descriptors do not match the request")
        sockets_sent = [fds[2]] + ([fds[-1]] if connection_index is not None else [])
        if not all(stat.S_ISSOCK(os.fstat(fd).st_mode) for fd in sockets_sent):
            raise ValueError("a status or connection descriptor that is not a socket")
    except Exception:  # anything (a pipe where a socket belongs, JSON nested too deep): dropped, never fatal
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        return None
    stdout, stderr, status_fd, *passed = fds
    new_client = socket.socket(fileno=passed.pop()) if connection_index is not None else None
    status = socket.socket(fileno=status_fd)
    fds = [stdout, stderr, *passed]  # the sockets own the other two
    try:
        pid = os.fork()
    except OSError:  # no memory or too many processes: the requester learns it as a server that did not answer
        for fd in fds:
            os.close(fd)
        status.close()
        if new_client is not None:
            new_client.close()
        return None
    if pid == 0:
        try:
            for sock in (*sockets, status, *([new_client] if new_client else [])):
                sock.detach()  # their numbers are about to be reused: a socket object must not close them later
            _become(module, function, args, env, cwd, stdout, stderr, list(zip(passed, targets, strict=True)))
        finally:
            os._exit(1)  # whatever happens in the child, it never returns into the server's loop
    for fd in fds:
        os.close(fd)
    with contextlib.suppress(OSError):
        status.send(str(pid).encode())
    return pid, status, new_client


def _become(module: str, function: str, args, env, cwd, stdout, stderr, passed) -> None:
    """In the forked child: become the fresh ``python -c`` child the request asked for, run it, and leave."""
    code = 1
    try:
        os.setsid()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        devnull = os.open(os.devnull, os.O_RDONLY)
        wanted = [t for _, t in passed]
        top = max([*wanted, devnull, stdout, stderr, *(fd for fd, _ in passed)]) + 1
        # Move every descriptor to keep above every number in use, then to its place: no move overwrites
        # another before it is copied.
        moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, top) for fd in (devnull, stdout, stderr, *(fd for fd, _ in passed))]
        for fd, number in zip(moved, [0, 1, 2, *wanted], strict=True):
            os.dup2(fd, number)
        keep = {0, 1, 2, *wanted}
        for name in os.listdir("/proc/self/fd"):
            if int(name) not in keep:
                with contextlib.suppress(OSError):
                    os.close(int(name))
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        sys.argv = ["-c", *args]
        if "numpy" in sys.modules:  # forked children would otherwise share the server's global stream
            sys.modules["numpy"].random.seed()
        threads = env.get("OMP_NUM_THREADS", "")
        # OpenMP read OMP_NUM_THREADS once, when the server (started without it) imported torch: each child
        # sets its own count, or torch's default for a process without the variable
        sys.modules["torch"].set_num_threads(int(threads) if threads.isdigit() and int(threads) > 0 else _threads)
        code = 0
        getattr(importlib.import_module(module), function)(*args)
    except SystemExit as exit_:  # as the interpreter ends on it: an int is the status, anything else printed
        if exit_.code is None or isinstance(exit_.code, int):
            code = (exit_.code or 0) & 0xFF
        else:
            with contextlib.suppress(Exception):
                print(exit_.code, file=sys.stderr)
            code = 1
    except BaseException:
        with contextlib.suppress(Exception):
            traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


# ------------------------------------------------------------------------------------ the self-check


def describe(*args: str) -> None:
    """A child that prints, as JSON, what it would look like to the user's code, then ends as ``args`` say.

    Started both ways (forked and fresh), the two descriptions must agree on everything but what a fork
    changes by design (``tests/test_forkserver.py``). ``args``: anything, echoed; ``exit=N`` ends with status
    N, ``signal=NAME`` by that signal, ``sleep=S`` waits S seconds first.
    """
    import numpy
    import torch

    from .worker import child_setup

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
                "numba_loaded": "numba" in sys.modules,  # by the server's warm-up (``_warm_before``), or not
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
