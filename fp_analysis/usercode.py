"""The user's files inside a worker: each in a module namespace of its own, every call into it guarded.

A KernelBench problem or solution is an ordinary Python file. It may import helpers that lie beside it
(``common.py``), build CUDA extensions, print, exit, raise, or change torch's global switches.
``UserFile`` imports one file with its folder first on ``sys.path``, and keeps the modules that import
brings in from outside the Python installation (its helpers, its extensions) to itself: they sit in
``sys.modules`` only while a call into that file runs and are taken out after it. So the solution's
``import common`` finds the solution's ``common.py``, never the problem's, even though both run in one
process.

``UserFile.call(where, fn, ...)`` makes one call into the user's code:

* it reports entering and leaving to the worker's parent, which enforces the timeout and names the
  call if the process dies in it (``fp_analysis.worker``);
* whatever escapes the call — an exception, ``sys.exit``, ``KeyboardInterrupt`` — becomes a
  ``UserCodeError`` that names the call and keeps the user's traceback;
* for the solution, changes to torch's global state are undone and noted (``notes``): the TF32 and
  reduced-precision switches, cuDNN's flags, the default dtype, grad mode, and functions replaced in
  ``torch``, ``torch.nn.functional`` or on ``torch.Tensor``. The problem's changes are kept: the problem
  file defines the setting the reference runs in, and a solution may not change it behind its back.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import pathlib
import site
import sys
import traceback
import types
from collections.abc import Callable

import torch
import torch.nn.functional as F

from .errors import FpaError, UserCodeError
from .worker import report_event

__all__ = ["UserFile", "check_output"]


class UserFile:
    """One user file (``side`` "problem" or "solution"), imported on ``load`` into its own module namespace."""

    def __init__(self, path: str | pathlib.Path, side: str):
        self.path = pathlib.Path(path).resolve()
        self.side = side
        self.folder = str(self.path.parent)
        digest = hashlib.sha256(str(self.path).encode()).hexdigest()[:12]
        self.name = f"fpa_{side}_{digest}"
        self.module: types.ModuleType | None = None
        self.modules: dict[str, types.ModuleType] = {}  # modules of this side, out of sys.modules between calls
        self.path_entries: list[str] = []  # sys.path entries this side's code added
        self.notes: list[str] = []  # global changes the side's code made (and, for the solution, that were undone)

    def load(self, required: tuple[str, ...]) -> types.ModuleType:
        """Import the file (a guarded call) and check that it defines ``required``; raise FpaError otherwise."""
        if not self.path.is_file():
            raise FpaError(f"{self.side} file not found: {self.path}")
        spec = importlib.util.spec_from_file_location(self.name, self.path)
        module = importlib.util.module_from_spec(spec)
        self.modules[self.name] = module  # in sys.modules while it runs, as an imported module would be
        self.call(f"importing {self.path.name}", spec.loader.exec_module, module)
        missing = [n for n in required if not hasattr(module, n)]
        if missing:
            raise FpaError(
                f"{self.path} does not define {', '.join(missing)} (a KernelBench {self.side} must define "
                f"{', '.join(required)})"
            )
        self.module = module
        return module

    def call(self, where: str, fn: Callable, *args, detail: str | None = None, replay: str | None = None, **kwargs):
        """``fn(*args, **kwargs)`` as a call into this side's code; see the module docstring."""
        fields = {"where": where, "side": self.side}
        if detail:
            fields["detail"] = detail
        if replay:
            fields["replay"] = replay
        guard = _TorchState() if self.side == "solution" else None
        report_event("enter", **fields)
        try:
            with self._active():
                value = fn(*args, **kwargs)
                if torch.cuda.is_initialized():  # a kernel's fault surfaces here, in the call that caused it
                    torch.cuda.synchronize()
                return value
        except UserCodeError:
            raise
        except SystemExit as stop:
            raise UserCodeError(
                f"{where} called sys.exit({stop.code!r})",
                side=self.side,
                where=where,
                fate="exited",
                details={"status": stop.code, **_context(detail, replay)},
            ) from None
        except BaseException as error:  # the user's code: whatever it raised is a finding about it
            raise UserCodeError(
                f"{where} raised {type(error).__name__}: {_first_line(error)}",
                side=self.side,
                where=where,
                fate="raised",
                details={
                    "exception": type(error).__name__,
                    "at": _innermost_user_frame(error, self.folder),
                    "traceback": _user_traceback(error),
                    **_context(detail, replay),
                },
            ) from None
        finally:
            report_event("leave")
            if guard is not None:
                self.notes += [f"{where} {change}; undone" for change in guard.restore()]

    @contextlib.contextmanager
    def _active(self):
        """This side's folder first on sys.path and its modules in sys.modules for the duration of a call."""
        before = dict(sys.modules)
        saved_path = list(sys.path)
        sys.path[:0] = [self.folder, *self.path_entries]
        sys.modules.update(self.modules)
        try:
            yield
        finally:
            added = [p for p in sys.path if p not in saved_path and p != self.folder]
            self.path_entries += [p for p in added if p not in self.path_entries]
            sys.path[:] = saved_path
            for name, module in list(sys.modules.items()):
                if before.get(name) is module or _is_installed(module):
                    continue
                self.modules[name] = module
                if name in before:
                    sys.modules[name] = before[name]
                else:
                    del sys.modules[name]


def check_output(value, where: str, side: str, like: torch.Tensor | None = None, detail: str | None = None):
    """``value`` if it is a floating-point tensor (of ``like``'s shape and dtype when given), else UserCodeError."""
    problem = None
    if not isinstance(value, torch.Tensor):
        problem = f"returned a {type(value).__name__}, not a tensor"
    elif not value.is_floating_point():
        problem = f"returned a tensor of dtype {value.dtype}, not a floating-point one"
    elif like is not None and value.dtype != like.dtype:
        problem = f"returned {value.dtype}, but the reference returns {like.dtype}"
    elif like is not None and value.shape != like.shape:
        problem = f"returned shape {tuple(value.shape)}, but the reference returns {tuple(like.shape)}"
    elif like is not None and value.device != like.device:
        problem = f"returned a tensor on {value.device}, but the reference's is on {like.device}"
    if problem is None:
        return value
    raise UserCodeError(f"{where} {problem}", side=side, where=where, fate="bad_output", details=_context(detail, None))


def _context(detail: str | None, replay: str | None) -> dict:
    return {k: v for k, v in (("detail", detail), ("replay", replay)) if v}


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    first = text.splitlines()[0] if text else ""
    return first[:300] + ("…" if len(first) > 300 else "")


def _user_traceback(error: BaseException, limit: int = 40) -> str:
    """The exception's traceback without our own frames above the user's code, at most ``limit`` lines."""
    lines = traceback.format_exception(type(error), error, error.__traceback__)
    ours = str(pathlib.Path(__file__).resolve())
    lines = [line for line in lines if ours not in line]
    text = "".join(lines).splitlines()
    return "\n".join(text[-limit:])


def _innermost_user_frame(error: BaseException, folder: str) -> str | None:
    """'file:line in function' of the deepest frame outside the installation (the user's code), or None."""
    frames = traceback.extract_tb(error.__traceback__)
    mine = [f for f in frames if not _is_installed_path(f.filename)] or [
        f for f in frames if f.filename.startswith(folder)
    ]
    if not mine:
        return None
    frame = mine[-1]
    return f"{frame.filename}:{frame.lineno} in {frame.name}"


def _library_roots() -> tuple[str, ...]:
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, str(pathlib.Path(__file__).resolve().parent)}
    with contextlib.suppress(AttributeError):
        roots.update(site.getsitepackages())
    with contextlib.suppress(AttributeError):
        roots.add(site.getusersitepackages())
    kernels = sys.modules.get("fpa_kernels")
    if kernels is not None and getattr(kernels, "__file__", None):
        roots.add(str(pathlib.Path(kernels.__file__).resolve().parent))
    return tuple(str(pathlib.Path(r).resolve()) for r in roots if r)


_LIBRARY_ROOTS = _library_roots()


def _is_installed(module) -> bool:
    """True for modules of the Python installation (stdlib, site-packages, fp_analysis), which all sides share."""
    places = []
    file = getattr(module, "__file__", None)
    if file:
        places.append(file)
    places += list(getattr(module, "__path__", None) or [])
    if not places:
        return True  # built-in and frozen modules
    return all(_is_installed_path(place) for place in places)


def _is_installed_path(place: str) -> bool:
    if place.startswith("<"):  # "<frozen runpy>", "<string>": not a file of the user's
        return True
    resolved = str(pathlib.Path(place).resolve())
    return any(resolved == root or resolved.startswith(root + "/") for root in _LIBRARY_ROOTS)


class _TorchState:
    """torch's global switches and function tables as they were; ``restore`` puts them back and says what changed."""

    _SWITCHES: tuple[tuple[str, Callable, Callable], ...] = (
        (
            "torch.backends.cudnn.allow_tf32",
            lambda: torch.backends.cudnn.allow_tf32,
            lambda v: setattr(torch.backends.cudnn, "allow_tf32", v),
        ),
        (
            "torch.backends.cudnn.enabled",
            lambda: torch.backends.cudnn.enabled,
            lambda v: setattr(torch.backends.cudnn, "enabled", v),
        ),
        (
            "torch.backends.cudnn.benchmark",
            lambda: torch.backends.cudnn.benchmark,
            lambda v: setattr(torch.backends.cudnn, "benchmark", v),
        ),
        (
            "torch.backends.cudnn.deterministic",
            lambda: torch.backends.cudnn.deterministic,
            lambda v: setattr(torch.backends.cudnn, "deterministic", v),
        ),
        (
            "torch.backends.cuda.matmul.allow_tf32",
            lambda: torch.backends.cuda.matmul.allow_tf32,
            lambda v: setattr(torch.backends.cuda.matmul, "allow_tf32", v),
        ),
        (
            "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
            lambda: torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
            lambda v: setattr(torch.backends.cuda.matmul, "allow_fp16_reduced_precision_reduction", v),
        ),
        (
            "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
            lambda: torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
            lambda v: setattr(torch.backends.cuda.matmul, "allow_bf16_reduced_precision_reduction", v),
        ),
        (
            "torch.get_float32_matmul_precision()",
            torch.get_float32_matmul_precision,
            torch.set_float32_matmul_precision,
        ),
        ("torch.get_default_dtype()", torch.get_default_dtype, torch.set_default_dtype),
        ("torch.is_grad_enabled()", torch.is_grad_enabled, torch.set_grad_enabled),
        (
            "torch.are_deterministic_algorithms_enabled()",
            torch.are_deterministic_algorithms_enabled,
            torch.use_deterministic_algorithms,
        ),
    )
    _TABLES = (("torch", torch), ("torch.nn.functional", F), ("torch.Tensor", torch.Tensor))

    def __init__(self):
        self.switches = [(name, get()) for name, get, _ in self._SWITCHES]
        self.tables = [(label, owner, dict(vars(owner))) for label, owner in self._TABLES]

    def restore(self) -> list[str]:
        changes = []
        for (name, before), (_, get, set_) in zip(self.switches, self._SWITCHES, strict=True):
            now = get()
            if now != before:
                changes.append(f"set {name} = {now!r}")
                with contextlib.suppress(Exception):
                    set_(before)
        for label, owner, before in self.tables:
            now = vars(owner)
            for key, value in before.items():
                if now.get(key) is not value and callable(value):
                    changes.append(f"replaced {label}.{key}")
                    with contextlib.suppress(Exception):
                        setattr(owner, key, value)
        return changes
