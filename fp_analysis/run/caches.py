"""fpa's caches on this machine, what they hold, and removing what has not been used for a while (``fpa cache``).

Builds are kept so that no run builds twice (``extension_store``: a ``load_inline`` build per key, a compile error
per key; ``places.extensions_folder``: a solution's own builds; ``fpa_kernels.build``: the kernels' cubins;
``triage.headers``: the builders' precompiled header), and nothing removes them on its own: a triage of every
KernelBench problem's samples leaves gigabytes. An entry's last use is its status-change time (ctime), not its
modification time, which any process may set to any day (``utime``: a solution could age another's build into the
next prune, or pin its own for ever): the store touches a build or a kept failure whenever it answers with it, a
solution's own folder is touched whenever a solution is given it, a precompiled header whenever a triage uses it; a
cubin is written when made (and rebuilt in seconds). Removing is safe beside running work for what that work does not
hold: a store entry only under its key's lock (not while it builds), a solution's folder only under its lock of use
(``places.hold_in_use``: not while a job runs the solution, nor while a builder imports it), a half-made store build
only once it is older than any build (``extension_store.stale_builds``), each last use read again under the lock, and
every entry first renamed away (a reader finds all of it or none). The Hypothesis database (the examples ``fpa fuzz``
found, replayed first on its next run) and fpa's error reports are listed, never pruned; the journal of files being
put back is not a cache.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import time
from dataclasses import dataclass

from . import places
from .extension_store import STORE_FOLDER, key_locked, stale_builds, store_folder

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
    before ``now`` (0: every one not in use). Half-made store builds older than any build (their worker killed) go
    too."""
    cutoff = (time.time() if now is None else now) - older_than_s
    entries, freed, busy = {}, {}, 0
    for name in _PRUNED:
        folder = _folder(name)
        entries[name] = freed[name] = 0
        old = [entry for entry in _entries(name, folder) if _last_use(entry) <= cutoff]
        if name == "store":
            old += stale_builds(folder)
        for entry in old:
            size = _bytes(entry)
            with _unused(name, entry) as free:
                if not free:
                    busy += 1
                    continue
                gone = _renamed_away(entry, cutoff)  # its last use read again: it may have been used meanwhile
            if gone is not None:
                _delete(gone)
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
    """When ``entry`` was last used: its status-change time (a touch sets it to now; nothing sets it back)."""
    with contextlib.suppress(OSError):
        return entry.lstat().st_ctime
    return 0.0


def _bytes(entry: pathlib.Path) -> int:
    """The bytes an entry's files take, at any depth (a solution may nest folders in its own build folder deeper than
    a recursive walk goes: ``os.walk`` recurses up to Python 3.12), no link followed (each folder opened with
    ``O_NOFOLLOW``: one swapped for a link after it was listed is not entered)."""
    if not entry.is_dir() or entry.is_symlink():
        with contextlib.suppress(OSError):
            return entry.lstat().st_size
        return 0
    total, folders = 0, [str(entry)]
    while folders:
        folder = folders.pop()
        try:
            descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            with os.scandir(descriptor) as children:
                for child in children:
                    with contextlib.suppress(OSError):
                        if child.is_dir(follow_symlinks=False):
                            folders.append(os.path.join(folder, child.name))
                        else:
                            total += child.stat(follow_symlinks=False).st_size
        except OSError:
            pass
        finally:
            os.close(descriptor)
    return total


@contextlib.contextmanager
def _unused(name: str, entry: pathlib.Path):
    """Yield whether ``entry`` may be removed now, holding what keeps work from starting on it meanwhile, taken
    without waiting: a store entry's key lock (``extension_store``'s ``.KEY.lock``), a solution's folder's lock of
    use (``places.hold_in_use``, which every job and builder running the solution holds shared)."""
    if name == "own":
        with places.unused(entry) as held:
            yield held
        return
    if name != "store" or entry.name.startswith(".building-"):
        yield True
        return
    with key_locked(entry.parent, entry.name.removesuffix(".failed"), deadline=0.0) as held:
        yield held


def _renamed_away(entry: pathlib.Path, cutoff: float) -> pathlib.Path | None:
    """Rename ``entry`` away (a reader finds it whole or not at all) where it was last used by ``cutoff`` (a half-made
    build: older than any build) and is still there; the new name, else None."""
    if not entry.name.startswith(".building-") and _last_use(entry) > cutoff:
        return None
    gone = entry.with_name(f".pruned-{entry.name}-{os.getpid()}")
    try:
        os.rename(entry, gone)
    except OSError:
        return None  # removed meanwhile
    return gone


def _delete(gone: pathlib.Path) -> None:
    if gone.is_dir() and not gone.is_symlink():
        places.remove_folder(gone)
    else:
        gone.unlink(missing_ok=True)
