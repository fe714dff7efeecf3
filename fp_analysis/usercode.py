"""A user's file inside a child process: imported from its own folder, every call into it guarded.

A KernelBench problem or solution is an ordinary Python file. It may import helpers that lie beside it
(``common.py``), build CUDA extensions, print, exit or raise. Each side runs in a process of its own
(``fp_analysis.worker``: the problem in the worker, the solution in the candidate process), so
``UserFile.load`` can simply put the file's folder first on ``sys.path`` for good: ``import common`` then
finds that side's ``common.py``, and never the other side's, which lives in another process.

``UserFile.call(where, fn, ...)`` makes one call into the user's code: it reports entering and leaving it
(``worker.report_event``: the parent enforces the timeout and names the call if the process dies in it),
waits for the GPU work it queued (a kernel's fault then surfaces in the call that caused it), and turns
whatever escapes — an exception, ``sys.exit``, ``KeyboardInterrupt`` — into a ``UserCodeError`` that names
the call, the line of the user's file it came from and the user's traceback.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.machinery
import importlib.util
import itertools
import pathlib
import site
import sys
import traceback
import types
from collections.abc import Callable

import torch

from .errors import Fate, FpaError, Side, UserCodeError
from .worker import report_event

__all__ = ["UserFile", "call_id", "check_output"]

_ids = itertools.count(1)


def seed_all(seed: int) -> None:
    """Seed torch's CPU generator (and CUDA's where there is CUDA), as ``torch.manual_seed`` does before KernelBench
    builds each model: the same parameters come out. Not ``torch.manual_seed`` itself, which on a machine without
    CUDA also queues a CUDA seeding with the caller's stack formatted: 7 ms a call, most of a small fuzz example."""
    torch.random.default_generator.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def call_id() -> int:
    """A new id for an ``enter``/``leave`` pair of events."""
    return next(_ids)


class UserFile:
    """One user file of ``side``, imported by ``load``."""

    def __init__(self, path: str | pathlib.Path, side: Side):
        self.path = pathlib.Path(path).resolve()
        self.side = Side(side)
        self.folder = str(self.path.parent)
        digest = hashlib.sha256(str(self.path).encode()).hexdigest()[:12]
        self.name = f"fpa_{self.side.value}_{digest}"
        self.module: types.ModuleType | None = None

    def load(self, required: tuple[str, ...]) -> types.ModuleType:
        """Import the file (a guarded call) and check that it defines ``required``; FpaError otherwise.

        Any file name is accepted (``solution.txt`` too): the source loader is named explicitly. The module
        is registered in ``sys.modules`` under a private name, as an imported module would be, so code that
        looks itself up there (dataclasses, pickle) works.
        """
        if not self.path.is_file():
            raise FpaError(f"{self.side.value} file not found: {self.path}")
        loader = importlib.machinery.SourceFileLoader(self.name, str(self.path))
        module = importlib.util.module_from_spec(importlib.util.spec_from_loader(self.name, loader))
        sys.modules[self.name] = module
        if self.folder not in sys.path:
            sys.path.insert(0, self.folder)  # this process runs this side alone: its folder stays first
        self.call(f"importing {self.path.name}", loader.exec_module, module)
        missing = [n for n in required if not hasattr(module, n)]
        if missing:
            raise FpaError(
                f"{self.path} does not define {', '.join(missing)} (a KernelBench {self.side.value} must define "
                f"{', '.join(required)})"
            )
        self.module = module
        return module

    @contextlib.contextmanager
    def watched(self, where: str):
        """A block that runs this side's code on fp_analysis's behalf (the analysis re-evaluating the Model):
        reported like a call, so the timeout applies, but what it raises is left to the caller to judge."""
        event = call_id()
        report_event("enter", id=event, where=where, side=self.side.value)
        try:
            yield
        finally:
            report_event("leave", id=event)

    def call(self, where: str, fn: Callable, *args, detail: str | None = None, replay: str | None = None, **kwargs):
        """``fn(*args, **kwargs)`` as a call into this side's code; see the module docstring."""
        context = {k: v for k, v in (("detail", detail), ("replay", replay)) if v}
        event = call_id()
        report_event("enter", id=event, where=where, side=self.side.value, **context)
        try:
            value = fn(*args, **kwargs)
            if torch.cuda.is_initialized():
                torch.cuda.synchronize()
            return value
        except SystemExit as stop:
            raise UserCodeError(
                f"{where} called sys.exit({stop.code!r})",
                side=self.side,
                where=where,
                fate=Fate.EXITED,
                details={"status": stop.code if isinstance(stop.code, int) else str(stop.code), **context},
            ) from None
        except BaseException as error:  # the user's code: whatever it raised is a finding about it
            raise UserCodeError(
                f"{where} raised {type(error).__name__}: {_first_line(error)}",
                side=self.side,
                where=where,
                fate=Fate.RAISED,
                details={
                    "exception": type(error).__name__,
                    "at": _innermost_user_frame(error),
                    "traceback": _user_traceback(error),
                    **context,
                },
            ) from None
        finally:
            report_event("leave", id=event)


def check_output(
    value, where: str, side: Side, like: torch.Tensor | None = None, device=None, detail: str | None = None
) -> torch.Tensor:
    """``value`` if it is a floating-point tensor (of ``like``'s shape, dtype and device when given), else
    UserCodeError. ``device`` is where ``value`` was made, when it has been moved since (another process)."""
    problem = None
    device = value.device if device is None and isinstance(value, torch.Tensor) else device
    if not isinstance(value, torch.Tensor):
        problem = f"returned a {type(value).__name__}, not a tensor"
    elif value.layout != torch.strided:
        problem = f"returned a {value.layout} tensor, not a dense one"
    elif not value.is_floating_point():
        problem = f"returned a tensor of dtype {value.dtype}, not a floating-point one"
    elif like is not None and value.dtype != like.dtype:
        problem = f"returned {value.dtype}, but the reference returns {like.dtype}"
    elif like is not None and value.shape != like.shape:
        problem = f"returned shape {tuple(value.shape)}, but the reference returns {tuple(like.shape)}"
    elif like is not None and torch.device(device) != like.device:
        problem = f"returned a tensor on {device}, but the reference's is on {like.device}"
    if problem is None:
        return value
    details = {"detail": detail} if detail else None
    raise UserCodeError(f"{where} {problem}", side=side, where=where, fate=Fate.BAD_OUTPUT, details=details)


def _first_line(error: BaseException) -> str:
    try:
        text = str(error).strip()
    except Exception:  # the user's exception's own __str__ failed
        text = "(its message could not be printed)"
    first = text.splitlines()[0] if text else ""
    return first[:300] + ("…" if len(first) > 300 else "")


def _user_traceback(error: BaseException, limit: int = 40) -> str:
    """The exception's traceback without our own frames, at most its last ``limit`` lines."""
    try:
        lines = traceback.format_exception(type(error), error, error.__traceback__)
    except Exception:  # a __str__ or __repr__ of the user's that fails
        lines = traceback.format_tb(error.__traceback__)
    ours = str(pathlib.Path(__file__).resolve())
    text = "".join(line for line in lines if ours not in line).splitlines()
    return "\n".join(text[-limit:])


def _innermost_user_frame(error: BaseException) -> str | None:
    """'file:line in function' of the deepest frame outside the Python installation (the user's code), or None."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not _is_installed_path(f.filename)]
    if not frames:
        return None
    frame = frames[-1]
    return f"{frame.filename}:{frame.lineno} in {frame.name}"


def _library_roots() -> tuple[str, ...]:
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, str(pathlib.Path(__file__).resolve().parent)}
    with contextlib.suppress(AttributeError):
        roots.update(site.getsitepackages())
    with contextlib.suppress(AttributeError):
        roots.add(site.getusersitepackages())
    return tuple(str(pathlib.Path(r).resolve()) for r in roots if r)


_LIBRARY_ROOTS = _library_roots()


def _is_installed_path(place: str) -> bool:
    """True for a file of the Python installation or of fp_analysis (not the user's)."""
    if place.startswith("<"):  # "<frozen runpy>", "<string>"
        return True
    resolved = str(pathlib.Path(place).resolve())
    return any(resolved == root or resolved.startswith(root + "/") for root in _LIBRARY_ROOTS)
