"""fpa's caches on this machine, what they hold, and removing what has not been used for a while (``fpa cache``).

Builds are kept so that no run builds twice (``extension_store``: a ``load_inline`` build per key, a compile error
per key; ``places.extensions_folder``: a solution's own builds; ``fpa_kernels.build``: the kernels' cubins;
``triage.headers``: the builders' precompiled header), and nothing removes them on its own: a triage of every
KernelBench problem's samples leaves gigabytes. An entry's last use is its modification time: the store touches a
build or a kept failure whenever it answers with it, a solution's own folder is touched whenever a solution is
given it, a precompiled header whenever a triage uses it; a cubin is written when made (and rebuilt in seconds).
Removing is safe beside running work for what that work does not hold: a store entry only under its key's lock (not
while it builds), a solution's folder only without torch's ``lock`` in it (not while it builds), every entry first
renamed away (a reader finds all of it or none). The Hypothesis database (the examples ``fpa fuzz`` found, replayed
first on its next run) and fpa's error reports are listed, never pruned; the journal of files being put back is
not a cache.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import time
from dataclasses import dataclass

from . import places
from .extension_store import STORE_FOLDER, key_locked, store_folder

__all__ = ["CacheSummary", "Removed", "prune", "summaries"]

# What each cache holds, in the order ``fpa cache`` lists them.
_WHAT = {
    "store": "extension builds in fpa's store, by load_inline's arguments (and sources' compile errors)",
    "own": "extension builds in solutions' own folders, by their files",
    "kernels": "fpa's own CUDA kernels, built for the GPU",
    "headers": "the triage builders' precompiled torch/extension.h",
    "hypothesis": "the examples fpa fuzz found, replayed first on its next run (not pruned)",
    "errors": "tracebacks of fpa's internal errors (not pruned)",
}
_PRUNED = ("store", "own", "kernels", "headers")


@dataclass(frozen=True)
class CacheSummary:
    """One cache: its ``name`` (a key of ``_WHAT``), what it holds, its folder, how many entries and bytes, and the
    oldest entry's last use (seconds since the epoch; None where it is empty)."""

    name: str
    what: str
    folder: str
    entries: int
    bytes: int
    oldest_use: float | None

    def to_dict(self) -> dict:
        return {"name": self.name, "what": self.what, "folder": self.folder, "entries": self.entries,
                "bytes": self.bytes, "oldest_use": self.oldest_use}  # fmt: skip


@dataclass(frozen=True)
class Removed:
    """What ``prune`` removed: entries and bytes per cache, and the entries it left because they were in use."""

    entries: dict[str, int]
    bytes: dict[str, int]
    busy: int

    def to_dict(self) -> dict:
        return {"entries": self.entries, "bytes": self.bytes, "busy": self.busy}


def summaries() -> list[CacheSummary]:
    """Each of fpa's caches on this machine (``$XDG_CACHE_HOME/fp_analysis``; the variables that move one, moved)."""
    result = []
    for name, what in _WHAT.items():
        folder = _folder(name)
        entries = _entries(name, folder)
        used = [_last_use(entry) for entry in entries]
        result.append(CacheSummary(name, what, str(folder), len(entries), sum(_bytes(entry) for entry in entries),
                                   min(used, default=None)))  # fmt: skip
    return result


def prune(older_than_s: float, now: float | None = None) -> Removed:
    """Remove the entries of the pruned caches (the builds: ``_PRUNED``) last used more than ``older_than_s`` seconds
    ago (0: every one not in use). Stale half-made store builds (``.building-*``) of that age go too."""
    cutoff = (time.time() if now is None else now) - older_than_s
    entries, freed, busy = {}, {}, 0
    for name in _PRUNED:
        folder = _folder(name)
        entries[name] = freed[name] = 0
        old = [entry for entry in _entries(name, folder) if _last_use(entry) <= cutoff]
        if name == "store":
            old += [entry for entry in folder.glob(".building-*") if _last_use(entry) <= cutoff]
        for entry in old:
            size = _bytes(entry)
            with _unused(name, entry) as free:
                if not free:
                    busy += 1
                    continue
                _remove(entry)
            entries[name] += 1
            freed[name] += size
    return Removed(entries, freed, busy)


def _folder(name: str) -> pathlib.Path:
    if name == "store":
        return store_folder()
    if name == "own":
        return places.cache_dir("extensions", places.EXTENSIONS_OVERRIDE)
    if name == "kernels":
        from fpa_kernels.build import cache_dir

        return cache_dir()
    if name == "hypothesis":
        return places.cache_dir("hypothesis", places.HYPOTHESIS_OVERRIDE)
    return places.cache_dir(name)


def _entries(name: str, folder: pathlib.Path) -> list[pathlib.Path]:
    """A cache's entries: a store's key folders and kept failures (not its locks or half-made builds); the
    solutions' own folders (not the store within); cubins; headers' folders; the database's and reports' files."""
    if not folder.is_dir():
        return []
    children = [child for child in folder.iterdir() if not child.name.startswith(".")]
    if name == "own":
        return [child for child in children if child.is_dir() and child.name != STORE_FOLDER]
    if name == "store":
        return [child for child in children if child.is_dir() or child.suffix == ".failed"]
    if name == "kernels":
        return [child for child in children if child.suffix == ".cubin"]
    if name == "hypothesis":
        return [path for path in folder.rglob("*") if path.is_file()]
    return children


def _last_use(entry: pathlib.Path) -> float:
    with contextlib.suppress(OSError):
        return entry.lstat().st_mtime
    return 0.0


def _bytes(entry: pathlib.Path) -> int:
    """The bytes an entry's files take (links not followed)."""
    if not entry.is_dir() or entry.is_symlink():
        with contextlib.suppress(OSError):
            return entry.lstat().st_size
        return 0
    total = 0
    for root, _, files in os.walk(entry):
        for file in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, file)).st_size
    return total


@contextlib.contextmanager
def _unused(name: str, entry: pathlib.Path):
    """Yield whether ``entry`` may be removed now, holding what keeps a build from starting on it meanwhile: a store
    entry's key lock (``extension_store``'s ``.KEY.lock``, taken without waiting), or for a solution's folder,
    torch's ``lock`` files being absent (one is in an extension's folder while torch builds it)."""
    if name == "own":
        yield not any(entry.glob("*/lock"))  # torch's, in the extension's build folder, while it builds
        return
    if name != "store" or entry.name.startswith(".building-"):
        yield True
        return
    with key_locked(entry.parent, entry.name.removesuffix(".failed"), deadline=0.0) as held:
        yield held


def _remove(entry: pathlib.Path) -> None:
    """Rename ``entry`` away first (a reader finds it whole or not at all), then remove it."""
    gone = entry.with_name(f".pruned-{entry.name}-{os.getpid()}")
    try:
        os.rename(entry, gone)
    except OSError:
        return  # removed meanwhile
    if gone.is_dir() and not gone.is_symlink():
        places.remove_folder(gone)
    else:
        gone.unlink(missing_ok=True)
