"""A precompiled ``torch/extension.h`` for the triage's builders: the C++ bindings unit of every ``load_inline``
extension (``main.cpp``: torch/extension.h, then the solution's declarations and pybind11's module) spends most of
its time parsing that header; precompiled once per toolchain, each build loads it instead.

GCC looks for ``NAME.gch`` in each include directory before ``NAME`` (GCC manual, "Using Precompiled Headers"), and
``CPATH``'s directories are searched after ``-I`` and before ``-isystem`` ones (GCC manual, "Environment
Variables"): torch's build names its headers with ``-isystem``, so a folder holding ``torch/extension.h.gch``, named
in the builders' ``CPATH``, is found first. GCC uses a precompiled header only where the compilation's options and
macros are those it was made with (else it parses the header, as without one), so it is made with the flags
torch's build gives the C++ unit (read from torch, ``_torch_cflags``), and a solution whose own flags differ
builds as before; where it is used, the object file is the same byte for byte
(``experiments/bench_build_memory.py --precompiled``). nvcc's units are unaffected: its host compiler preprocesses
(``-E`` uses no precompiled header) and its front ends read the preprocessed file.

Made by this process (never a solution's: a solution's process may write only its own folders), in fpa's cache
under the hash of the command and the toolchain, written under a temporary name and renamed, so that triages at
once on one machine share one file. Made in the background: builds that start before it is ready build without it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import json
import os
import pathlib
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from ..run.places import cache_dir

__all__ = ["PrecompiledHeader"]

_BUILD_TIMEOUT_S = 600


class PrecompiledHeader:
    """``environment()``: the variables that let a build use the precompiled header ({} until it is made, or where it
    cannot be); the first call starts making it in a thread. ``state``: "not asked", "building", "ready" or why not.
    ``close()``, when the triage ends: a compiler still making it is stopped and its partial file removed (a
    triage killed outright leaves one, removed by the next once it is older than any build could be)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._folder: str | None = None
        self._compiler: subprocess.Popen | None = None
        self._closed = False
        self.state = "not asked"

    def environment(self) -> dict[str, str]:
        with self._lock:
            if self.state == "not asked" and not self._closed:
                self.state = "building"
                threading.Thread(target=self._make, name="fpa-pch", daemon=True).start()
            if self._folder is None:
                return {}
        given = os.environ.get("CPATH")
        return {"CPATH": self._folder + (os.pathsep + given if given else "")}

    def close(self) -> None:
        with self._lock:
            self._closed, compiler = True, self._compiler
        if compiler is not None and compiler.poll() is None:
            _kill(compiler)
            compiler.wait()

    def _started(self, compiler: subprocess.Popen) -> bool:
        """Hold ``compiler`` so that ``close`` can stop it; False (and it killed) where the triage ended already."""
        with self._lock:
            self._compiler = compiler
            closed = self._closed
        if closed:
            _kill(compiler)
        return not closed

    def _make(self) -> None:
        try:
            folder, state = _made(self._started)
        except Exception as error:  # no compiler, a full disk: the builds parse the header, as without one
            folder, state = None, f"not made: {type(error).__name__}: {str(error)[:200]}"
        with self._lock:
            self._folder, self.state = folder, state


def _kill(process: subprocess.Popen) -> None:
    """SIGKILL to the compiler's process group (the driver's children too: they hold its stderr open)."""
    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGKILL)


def _toolchain() -> tuple[str, pathlib.Path, tuple[str, ...]]:
    """The C++ compiler torch's builds run, torch/extension.h, and the flags torch gives an extension's C++ unit."""
    from torch.utils.cpp_extension import get_cxx_compiler, include_paths

    return get_cxx_compiler(), pathlib.Path(include_paths()[0]) / "torch" / "extension.h", _torch_cflags()


def _command(output: str) -> list[str]:
    """The compiler run that makes ``output`` from torch/extension.h with the builds' own flags."""
    compiler, header, flags = _toolchain()
    return [compiler, "-x", "c++-header", str(header), "-o", output, *flags]


def _unused(folder: pathlib.Path, started) -> str | None:
    """None where the compiler uses the header in ``folder`` for a unit that starts with ``#include
    <torch/extension.h>``, compiled with the builds' flags; else why not. GCC's ``-H`` lists each header it reads,
    a precompiled one marked ``!`` where used and ``x`` where found but invalid, and ``-Winvalid-pch`` says why
    (GCC manual, "Using Precompiled Headers"); a compiler that ignores ``.gch`` files (clang looks for them only
    through ``-include``) lists the header itself."""
    compiler, _, flags = _toolchain()
    with tempfile.TemporaryDirectory(prefix="fpa-pch-probe-") as probe:
        source = pathlib.Path(probe) / "probe.cpp"
        source.write_text("#include <torch/extension.h>\n")
        command = [compiler, *flags, "-fsyntax-only", "-H", "-Winvalid-pch", str(source)]
        returncode, errors = _held(command, started, {**os.environ, "CPATH": str(folder)})
    lines = errors.splitlines()
    if returncode == 0 and lines and lines[0] == f"! {folder / 'torch' / 'extension.h.gch'}":
        return None
    said = [line for line in lines if any(kind in line for kind in ("warning:", "error:", "note:"))][:4] or lines[:1]
    return f"made, not used by {compiler} (exit {returncode}): {' | '.join(said)[:400]}"


def _held(command: list[str], started, environment: dict | None = None) -> tuple[int, str]:
    """Run ``command`` in its own process group (the driver and cc1plus stop together), given to ``started`` as it
    starts; (its exit status, its stderr). Raises ``_Stopped`` where the triage ended first or it ran too long."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               start_new_session=True, env=environment)  # fmt: skip
    if not started(process):
        process.wait()
        raise _Stopped("the triage ended first")
    try:
        _, errors = process.communicate(timeout=_BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        _kill(process)
        process.wait()
        raise _Stopped(f"the compiler took over {_BUILD_TIMEOUT_S} s") from None
    if process.returncode < 0:  # killed: by ``close`` as the triage ended, or by the system
        raise _Stopped(f"the compiler was ended by signal {-process.returncode}")
    return process.returncode, errors


class _Stopped(Exception):
    """A compiler run stopped before it ended: the triage ended, or it ran past ``_BUILD_TIMEOUT_S``."""


@functools.lru_cache(maxsize=1)
def _torch_cflags() -> tuple[str, ...]:
    """The flags of an extension's C++ unit as this torch writes them (its ninja file's ``cflags``), less the one
    that names the extension (``-DTORCH_EXTENSION_NAME``, which torch's headers do not read): read, not copied,
    since they change between torch versions (2.11 and 2.13 differ in ``-std``, and a header precompiled with
    other flags is not used). torch's ninja writer is internal: its parameters are given by name, as far as this
    version has them."""
    from torch.utils import cpp_extension

    write = cpp_extension._write_ninja_file_to_build_library
    with tempfile.TemporaryDirectory(prefix="fpa-cflags-") as folder:
        source = pathlib.Path(folder) / "main.cpp"
        source.write_text("")
        arguments = {"path": str(pathlib.Path(folder) / "build.ninja"), "name": "fpa_cflags",
                     "sources": [str(source)], "extra_cflags": [], "extra_cuda_cflags": [], "extra_sycl_cflags": [],
                     "extra_ldflags": [], "extra_include_paths": [], "with_cuda": False, "with_sycl": False,
                     "is_standalone": False}  # fmt: skip
        wanted = inspect.signature(write).parameters
        write(**{name: value for name, value in arguments.items() if name in wanted})
        lines = (pathlib.Path(folder) / "build.ninja").read_text().splitlines()
    given = next(line.split("=", 1)[1] for line in lines if line.startswith("cflags ="))
    return tuple(flag for flag in shlex.split(given) if not flag.startswith("-DTORCH_EXTENSION_NAME="))


def _made(started) -> tuple[str | None, str]:
    """(the folder to name in CPATH, "ready"), made now where the cache does not hold it; ``started(process)`` is
    given the compiler as it starts (False from it: stop). The key holds what decides the header's contents: the
    command, the compiler, torch's version and header, and the include paths the environment adds."""
    import importlib.metadata

    command = _command("-")
    compiler_name, header_path, _ = _toolchain()
    if shutil.which(compiler_name) is None:
        return None, f"not made: no C++ compiler {compiler_name!r}"
    compiler = subprocess.run([compiler_name, "--version"], capture_output=True, text=True, timeout=30).stdout
    header = header_path.stat()
    environment = [os.environ.get(name) for name in ("CPATH", "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH")]
    key = json.dumps([command, compiler, importlib.metadata.version("torch"), header.st_size, header.st_mtime_ns,
                      environment])  # fmt: skip
    folder = cache_dir("headers") / hashlib.sha256(key.encode()).hexdigest()[:24]
    target = folder / "torch" / "extension.h.gch"
    try:
        if not target.is_file():
            _make(target, started)
        with contextlib.suppress(OSError):  # used now: ``run.caches.prune`` removes headers unused for a while
            os.utime(folder)
        why = _unused(folder, started)
    except _Stopped as stopped:
        return None, f"not made: {stopped}"
    except _Failed as failed:
        return None, f"not made: {failed}"
    return (str(folder), "ready") if why is None else (None, why)


def _make(target: pathlib.Path, started) -> None:
    """Compile torch/extension.h into ``target`` under a temporary name, then rename it (triages at once share it)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in target.parent.glob(".extension-*.gch.part"):  # left by a triage killed while it made one
        with contextlib.suppress(OSError):
            if time.time() - stale.stat().st_mtime > _BUILD_TIMEOUT_S:
                stale.unlink()
    handle, partial = tempfile.mkstemp(dir=target.parent, prefix=".extension-", suffix=".gch.part")
    os.close(handle)
    try:
        returncode, errors = _held(_command(partial), started)
        if returncode != 0:
            raise _Failed(f"the compiler exited {returncode}: {errors.strip()[-300:]}")
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)


class _Failed(Exception):
    """The compiler could not make the header (its message)."""
