"""A job's child process as its parent sees it: started forked or fresh, its output captured, how it ended.

Every process a job runs the user's code in (the worker, the candidate process) is a ``ChildProcess``: forked
from the fork server (``fp_analysis.run.forkserver``), which has imported torch, or started as a fresh interpreter
where there is none; the child cannot tell the difference. What every child gets (with what it does itself first,
``childsetup.child_setup``):

* **Output captured.** Its stdout and stderr (file descriptors 1 and 2, so a compiler that ``load_inline``
  runs is captured too) go to files, at most ``OUTPUT_LIMIT_BYTES`` each (the file-size limit of the
  process: beyond it the kernel ends the child with SIGXFSZ); the parent keeps the head and tail of each
  (``CapturedOutput``) and never mixes them into its own output, so ``--json`` stays ours alone.
* **A session of its own**, so a kill takes what the child started (compilers) with it; and a thread
  that ends the child and its group when its parent dies, however the parent dies.
* **A clean ``sys.path``**: not the current folder (``python -c`` would put it first), so the user's files
  see their own folders only, as they would under KernelBench.

This module does not import torch: the parent that only supervises starts fast.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pathlib
import signal
import subprocess
import sys
import time
from collections.abc import Sequence

from ..errors import Fate, InternalError
from . import forkserver
from .childsetup import PARENT_ENV
from .interrupts import signal_name

__all__ = ["CapturedOutput", "ChildProcess", "start_fork_server"]

# How much of each captured stream is kept: its first and last this many bytes.
_KEEP_BYTES = 16_384

# Seconds to wait for a killed child's end to be reported (by the fork server, where it was forked).
_REAP_S = 10.0


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
        env = {**_child_env(env), PARENT_ENV: str(alive_read)}
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


def _package_root() -> pathlib.Path:
    """The folder holding this ``fp_analysis``, so a child imports the same copy as its parent."""
    return pathlib.Path(__file__).resolve().parents[2]
