"""A user's file inside a child process: imported from its own folder, every call into it guarded.

A KernelBench problem or solution is an ordinary Python file. It may import helpers that lie beside it
(``common.py``), build CUDA extensions, print, exit or raise. Each side runs in a process of its own
(``fp_analysis.run.worker``: the problem in the worker, the solution in the candidate process), so
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
import importlib.abc
import importlib.machinery
import importlib.util
import itertools
import os
import pathlib
import site
import sys
import traceback
import types
from collections.abc import Callable

import torch

from ..errors import Fate, FpaError, Side, UserCodeError
from .worker import report_event

__all__ = ["UserFile", "call_id", "check_output", "copied", "written_inputs", "wrong_output"]

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
    """One user file of ``side``, imported by ``load``: from the disk, or from ``sources`` (its snapshot,
    ``fp_analysis.run.snapshot``: relative path from its folder → bytes, the file itself among them)."""

    def __init__(self, path: str | pathlib.Path, side: Side, sources: dict[str, bytes] | None = None):
        self.path = pathlib.Path(path).resolve()
        self.side = Side(side)
        self.folder = str(self.path.parent)
        self.sources = sources
        digest = hashlib.sha256(os.fsencode(self.path)).hexdigest()[:12]  # any name: undecodable bytes too
        self.name = f"fpa_{self.side.value}_{digest}"
        self.module: types.ModuleType | None = None

    def load(self, required: tuple[str, ...]) -> types.ModuleType:
        """Import the file (a guarded call) and check that it defines ``required``; FpaError otherwise.

        Any file name is accepted (``solution.txt`` too): the source loader is named explicitly. The module
        is registered in ``sys.modules`` under a private name, as an imported module would be, so code that
        looks itself up there (dataclasses, pickle) works. From a snapshot, the file and the modules beside it
        are served from memory (``_SnapshotFinder``), and the folder comes last on ``sys.path`` (for what the
        snapshot does not hold: a compiled extension, a package deeper than it reads), so nothing written there later
        is imported in their place, and nothing there shadows an installed module.
        """
        if self.sources is not None:
            loader = _SnapshotLoader(str(self.path), self.sources[self.path.name])
            # before the path finder (its packages' submodules are the snapshot's too), after built-in and frozen ones
            at = next((i for i, f in enumerate(sys.meta_path) if f is importlib.machinery.PathFinder), 0)
            sys.meta_path.insert(at, _SnapshotFinder(pathlib.Path(self.folder), self.sources))
            if self.folder not in sys.path:
                sys.path.append(self.folder)
        elif not self.path.is_file():
            raise FpaError(f"{self.side.value} file not found: {self.path}")
        else:
            loader = importlib.machinery.SourceFileLoader(self.name, str(self.path))
            if self.folder not in sys.path:
                sys.path.insert(0, self.folder)  # this process runs this side alone: its folder stays first
        module = importlib.util.module_from_spec(importlib.util.spec_from_loader(self.name, loader))
        sys.modules[self.name] = module
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


class _SnapshotLoader(importlib.abc.SourceLoader):
    """Source from memory under its file's name (tracebacks name the file); no bytecode is read or written."""

    def __init__(self, path: str, data: bytes):
        self.path, self.data = path, data

    def get_filename(self, fullname: str) -> str:
        return self.path

    def get_data(self, path: str) -> bytes:
        if path != self.path:
            raise OSError(f"{path} is not in the snapshot")
        return self.data


class _SnapshotFinder(importlib.abc.MetaPathFinder):
    """Finds the modules and packages of a snapshot's ``.py`` files by name, as the path finder would find them in
    its folder: ``common.py`` is ``common``, ``pkg/__init__.py`` is ``pkg``, ``pkg/helper.py`` is ``pkg.helper``,
    and a folder without ``__init__.py`` a namespace package — but a top-level name an installed or standard module
    has is left to it: a file beside the user's (a ``colorsys.py`` a solution wrote there, in an earlier run) is
    never imported in its place."""

    def __init__(self, folder: pathlib.Path, sources: dict[str, bytes]):
        self.folder, self.sources = folder, sources
        self.modules: dict[str, tuple[str, bool]] = {}  # name → (relative path, is a package)
        parents = set()
        for relative in sources:
            parts = pathlib.PurePath(relative).parts
            if not relative.endswith(".py") or not all(p.isidentifier() for p in (*parts[:-1], parts[-1][:-3])):
                continue
            names = [*parts[:-1], parts[-1][:-3]]
            package = names[-1] == "__init__"
            if package:
                names.pop()
            if names:
                self.modules[".".join(names)] = (relative, package)
                parents.update(".".join(names[:i]) for i in range(1, len(names)))
        self.namespaces = parents - set(self.modules)

    def find_spec(self, fullname: str, path=None, target=None):
        if fullname not in self.modules and fullname not in self.namespaces:
            return None
        if "." in fullname:  # a submodule: the snapshot's only within a package the snapshot gave
            if not any(str(p).startswith(str(self.folder) + os.sep) for p in path or ()):
                return None  # fp_analysis.x planted beside the problem is not the installed package's x
        else:
            elsewhere = [p for p in sys.path if p != str(self.folder)]
            if importlib.machinery.PathFinder.find_spec(fullname, elsewhere) is not None:
                return None  # installed or standard: the path finder's
        if fullname in self.modules:
            relative, package = self.modules[fullname]
            origin = str(self.folder / relative)
            locations = [str((self.folder / relative).parent)] if package else None
            return importlib.util.spec_from_file_location(
                fullname, origin, loader=_SnapshotLoader(origin, self.sources[relative]),
                submodule_search_locations=locations,
            )  # fmt: skip
        if fullname in self.namespaces:
            spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
            spec.submodule_search_locations = [str(self.folder.joinpath(*fullname.split(".")))]
            return spec
        return None


def written_inputs(originals: list, used: list) -> list[int]:
    """The indices of the tensors of ``used`` (copies of ``originals`` a call was given) that the call wrote into:
    another shape, dtype or values than the original's (NaN equal to NaN)."""
    written = []
    for index, (original, copy) in enumerate(zip(originals, used, strict=True)):
        if not isinstance(original, torch.Tensor):
            continue
        if type(copy) is not type(original) or copy.shape != original.shape or copy.dtype != original.dtype:
            written.append(index)  # another class too: the user's code swapped it
            continue
        same = copy == original.to(copy.device)
        if original.is_floating_point() or original.is_complex():
            same |= copy.isnan() & original.to(copy.device).isnan()
        if not bool(same.all()):
            written.append(index)
    return written


def copied(values: list) -> list:
    """``values`` with every tensor copied in its own layout (``wire.storage_span``: a strided or expanded input
    stays one): what a call into the user's code gets, so that what it writes stays in the copy."""
    from .wire import storage_span

    def copy(t):
        if not isinstance(t, torch.Tensor) or t.layout != torch.strided:
            return t
        t = t.detach().resolve_conj().resolve_neg()
        return torch.as_strided(storage_span(t).clone(), t.shape, t.stride())

    return [copy(v) for v in values]


def check_output(
    value, where: str, side: Side, like: torch.Tensor | None = None, device=None, detail: str | None = None
) -> torch.Tensor:
    """``value`` if it is a dense tensor of real values (floating point; integer or bool where a Model returns indices
    or masks), on ``like``'s device when given, else UserCodeError.
    ``device`` is where ``value`` was made, when it has been moved since (another process). Against a reference
    (``like``), another shape or dtype — an integer one too — is a wrong result, not a failure of the code
    (``wrong_output``)."""
    problem = None
    device = value.device if device is None and isinstance(value, torch.Tensor) else device
    if not isinstance(value, torch.Tensor):
        problem = f"returned a {type(value).__name__}, not a tensor"
    elif value.layout != torch.strided:
        problem = f"returned a {value.layout} tensor, not a dense one"
    elif value.is_complex() and like is None:  # against a reference, a wrong dtype (``wrong_output``)
        problem = f"returned a tensor of dtype {value.dtype}, not a real one (floating point, integer or bool)"
    elif like is not None and torch.device(device) != like.device:
        problem = f"returned a tensor on {device}, but the reference's is on {like.device}"
    if problem is None:
        return value
    details = {"detail": detail} if detail else None
    raise UserCodeError(f"{where} {problem}", side=side, where=where, fate=Fate.BAD_OUTPUT, details=details)


def wrong_output(value: torch.Tensor, like: torch.Tensor, where: str = "ModelNew.forward") -> str | None:
    """How ``value`` (a side's output, a tensor) differs from the reference's ``like`` in shape or dtype, in words;
    None where it does not. A wrong shape or dtype is a wrong result (verdict ``bug``), as a wrong value is."""
    if tuple(value.shape) != tuple(like.shape):
        return f"{where} returns shape {tuple(value.shape)} where the reference returns {tuple(like.shape)}"
    if value.dtype != like.dtype:
        return f"{where} returns {value.dtype} where the reference returns {like.dtype}"
    return None


def _first_line(error: BaseException) -> str:
    try:
        text = str(error).strip()
    except Exception:  # the user's exception's own __str__ failed
        text = "(its message could not be printed)"
    first = text.splitlines()[0] if text else ""
    return first[:300] + ("…" if len(first) > 300 else "")


_OURS = str(pathlib.Path(__file__).resolve().parents[1]) + os.sep  # fp_analysis/: the frames that call the user's


def _user_traceback(error: BaseException, limit: int = 40, width: int = 2000) -> str:
    """The exception's traceback without our own frames (each frame whole: its file line and its source line), at
    most its last ``limit`` lines of ``width`` characters (a message of megabytes stays a message, not a megabyte of
    record); chained exceptions too."""
    try:
        shown = traceback.TracebackException(type(error), error, error.__traceback__)
        seen, todo = set(), [shown]
        while todo:  # the exception and those it was raised from or during, each once
            each = todo.pop()
            if id(each) in seen:
                continue
            seen.add(id(each))
            each.stack = traceback.StackSummary.from_list([f for f in each.stack if not f.filename.startswith(_OURS)])
            todo += [chained for chained in (each.__cause__, each.__context__) if chained is not None]
        lines = list(shown.format())
    except Exception:  # a __str__ or __repr__ of the user's that fails
        frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith(_OURS)]
        lines = traceback.format_list(frames)
    text = "".join(lines).splitlines()
    return "\n".join(line[:width] + ("…" if len(line) > width else "") for line in text[-limit:])


def _innermost_user_frame(error: BaseException) -> str | None:
    """'file:line in function' of the deepest frame outside the Python installation (the user's code), or None."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not _is_installed_path(f.filename)]
    if not frames:
        return None
    frame = frames[-1]
    return f"{frame.filename}:{frame.lineno} in {frame.name}"


def _library_roots() -> tuple[str, ...]:
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, str(pathlib.Path(__file__).resolve().parents[1])}
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
