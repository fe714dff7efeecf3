"""The fork server's own process: import what the jobs import, then fork a child on each request and report its end.

A child forked from here starts in the state a fresh interpreter would reach (the protocol and the requester's end
are ``fp_analysis.run.forkserver``'s). That holds because the server does nothing else: it never runs user code,
runs torch only in a warm-up of its own on one thread before it forks its second worker
(``fp_analysis.run.forkserver_warmup``: no OpenMP thread pool exists to be lost in the fork) and never touches CUDA
(a process that has initialised the CUDA driver cannot fork a child that uses it; the children initialise it
themselves). Each forked child then makes itself look like the ``python -c`` child it replaces (``_become``): a
session of its own, the requester's environment, current folder and ``sys.argv``, the requester's file
descriptors at the same numbers (as ``subprocess.Popen(pass_fds=...)`` gives them) and no other, the signal
dispositions of a fresh interpreter, numpy's global generator reseeded (Python's ``random`` reseeds itself after a
fork), and ``OMP_NUM_THREADS`` applied (the server is started without it, and each child sets its own thread
count). Two differences remain, by design: every child shares the server's string-hash seed (a fresh interpreter
draws its own unless ``PYTHONHASHSEED`` is set), and a child leaves with ``os._exit`` once its target returns or
raises, so ``atexit`` handlers the user's code registered do not run (the worker leaves that way anyway).

The server must survive whatever a job's code sends it: a request it cannot read (not JSON, a pipe where a
socket belongs, a target not in ``TARGETS``) is dropped with its descriptors, and a fork that fails is a
request not answered. It ends when its requester ends, and ends every orphan it adopts meanwhile
(``_end_adopted``).
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import json
import os
import pathlib
import select
import signal
import socket
import stat
import sys
import time
import traceback

from .forkserver import MAX_MESSAGE, TARGETS
from .forkserver_warmup import warm_before

__all__ = ["serve"]

# What the server imports before it forks anything: what the targets import first (torch, numpy, the candidate
# process's module, the explanation's). Its warm-up comes later (``forkserver_warmup.warm_before``).
_PRELOAD = ("torch", "numpy", "fp_analysis.run.candidate", "fp_analysis.explain.job")
# Modules a request may ask the server to import before it forks (``ChildSpec.preload``): a job's module, so that
# the first job of a kind pays its import in the server and every later one starts with it.
_MAY_PRELOAD = frozenset({"fp_analysis.explain.job", "fp_analysis.fuzz.search", "fp_analysis.run.candidate"})

_ADOPTED_SCAN_S = 1.0  # how often the server looks for orphans it adopted (_end_adopted)
_LAST_SWEEP_S = 2.0  # how long the server, its requester gone, waits for its jobs' descendants to reach it (_end_all)
_MAX_FDS = 64

_threads = 1  # torch's thread count for a process whose environment does not set one


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
    owners: dict[int, socket.socket] = {}  # child pid → the client that asked for it
    connection.send(json.dumps({"ready": True}).encode())
    while True:
        ready = select.select([alive_fd, wake_read, *clients], [], [], _ADOPTED_SCAN_S)[0]
        _end_adopted(statuses)
        if alive_fd in ready:  # the requester has ended: so do we, and what our jobs started
            _end_all(statuses)
            os._exit(0)
        if wake_read in ready:
            with contextlib.suppress(BlockingIOError):
                os.read(wake_read, 4096)
            _reap(statuses)
        for client in [c for c in clients if c in ready]:
            try:
                message, fds, _, _ = socket.recv_fds(client, MAX_MESSAGE, _MAX_FDS)
            except OSError:
                message, fds = b"", []
            if not message:
                clients.remove(client)
                client.close()
                for fd in fds:
                    os.close(fd)
                _end_orphaned(client, owners, statuses)
                continue
            keep = (connection, *clients, *statuses.values())
            try:
                started = _start(message, fds, keep)
            except Exception:  # a last guard: one request never ends the server that every job needs
                started = None
            if started is not None:
                pid, status, new_client = started
                statuses[pid] = status
                owners[pid] = client
                if new_client is not None:
                    clients.append(new_client)
        _reap(statuses)  # a child that ended between the select and now
        for pid in [pid for pid in owners if pid not in statuses]:  # reaped: its number may be another's next
            del owners[pid]


def _end_orphaned(client: socket.socket, owners: dict, statuses: dict) -> None:
    """SIGKILL the children ``client`` asked for, once its connection has closed (the worker that asked for a
    candidate or a build has ended): each watches its parent's pipe (``childsetup``), but one that is stopped (a
    solution's process while fpa builds for it, ``candidate``) cannot, and would wait for ever."""
    for pid in [pid for pid, owner in owners.items() if owner is client]:
        del owners[pid]
        if pid in statuses:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def _end_adopted(statuses: dict[int, socket.socket]) -> None:
    """SIGKILL every child of the server that it did not fork: an orphan it adopted as the subreaper of its children's
    descendants (``hardening.adopt_orphans``), such as a daemon a solution left in a session of its own, which would
    otherwise outlive its job (and act on the next: edit its files, signal its processes). ``_reap`` collects them."""
    me = os.getpid()
    for pid, parent in _parents().items():
        if parent == me and pid not in statuses:  # a zombie too: a leader that left by SYS_exit looks one while its
            with contextlib.suppress(ProcessLookupError, PermissionError):  # threads run
                os.kill(pid, signal.SIGKILL)


def _parents() -> dict[int, int]:
    """Every process's parent, from /proc (a process that ends meanwhile is left out)."""
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                parents[int(name)] = int(pathlib.Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return parents


def _end_all(statuses: dict[int, socket.socket]) -> None:
    """The requester has ended: every descendant of the server stopped (SIGSTOP: none forks again), then killed, until
    none is left or ``_LAST_SWEEP_S`` passed. The jobs watch their parents too, but what a job started in a process
    group of its own (ninja puts each compiler in one), at any depth, would otherwise outlive us under init,
    compiling for a triage that has ended; one started between two looks is re-parented here as its parent dies,
    and found by the next."""
    deadline = time.monotonic() + _LAST_SWEEP_S
    while time.monotonic() < deadline:
        parents, found = _parents(), {os.getpid()}
        while True:  # the server's descendants, level by level
            below = {pid for pid, parent in parents.items() if parent in found} - found
            if not below:
                break
            found |= below
        found.discard(os.getpid())
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in found:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
        try:
            while os.waitpid(-1, os.WNOHANG)[0] != 0:
                pass
        except ChildProcessError:
            return
        time.sleep(0.02)


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
        warm_before(request["target"])
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
