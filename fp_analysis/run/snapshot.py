"""The files a job is given, read once before any of its user code runs: what the reference is imported from, and
what a solution may not change.

A solution runs as the user running ``fpa`` and may write any file that user can: the shared ``problem.py`` of a
triage (so that later pairs would be judged against its edit), a helper beside it, another sample's solution. So
before any pair runs, the problem and the solution of each pair are read with the source files they may read
(``sources_of``: helper modules, an extension's ``.cu`` and ``.cpp`` files, in their folders and four levels of
subfolders). Then:

* the worker imports the problem and the helper modules beside it from that copy in memory
  (``fp_analysis.run.usercode.UserFile``), never from the disk the solution can reach, so an edit made while the job
  runs — even one undone before it ends — cannot reach the reference;
* ``Given.changed`` reads the files again: a job whose files changed while it ran is the solution's failure
  (``Fate.MODIFIED_FILES``, never a verdict), ``Given.restore`` puts the files back as they were read (so that
  neither the pairs after it nor a later run are judged against the edit), and a triage stores no row whose files
  changed under it.

A snapshot holds at most ``MAX_FILES`` files and ``MAX_BYTES`` bytes: a problem in a folder that holds more
source than that (a home folder, a large repository) is refused with the reason, rather than read for minutes.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import hashlib
import json
import os
import pathlib
import socket
import stat
import tempfile
import uuid

from ..errors import ParameterError

__all__ = ["MAX_BYTES", "MAX_FILES", "PROBLEM_FILE", "SOURCE_SUFFIXES", "Given", "Journal", "Snapshot", "sources_of"]

PROBLEM_FILE = "problem.py"
# The files a problem or solution may read besides itself: helper modules, and sources an extension builds from.
SOURCE_SUFFIXES = (".py", ".cu", ".cuh", ".cpp", ".cc", ".c", ".h", ".hpp")
_SOURCE_DEPTH = 4  # subfolder levels searched for them
MAX_FILES = 20_000
MAX_BYTES = 256 * 2**20


def sources_of(folder: pathlib.Path, skip: frozenset = frozenset(), depth: int = _SOURCE_DEPTH) -> list[pathlib.Path]:
    """The source files (``SOURCE_SUFFIXES``) a problem or solution in ``folder`` may read: those in it and in its
    subfolders (a ``pkg/helper.py`` it imports), except hidden folders, ``__pycache__``, folded links (a loop),
    other problems' folders and the folders in ``skip`` (the other pairs' solution folders: a problem folder's
    samples are not its helpers). In path order."""
    found = []
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return found
    for path in entries:
        if path.name.startswith(".") or path.name == "__pycache__":
            continue
        if path.is_dir():
            if depth > 0 and not path.is_symlink() and path not in skip and not (path / PROBLEM_FILE).exists():
                found += sources_of(path, skip, depth - 1)
        elif path.suffix.lower() in SOURCE_SUFFIXES and path.is_file():
            found.append(path)
        if len(found) > MAX_FILES:
            break
    return found


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """One user file and the source files it may read, as they were when read: ``contents`` maps each file's path
    relative to ``folder`` (the file's own folder) to its bytes; ``sources`` is the order ``sources_of`` gave."""

    path: pathlib.Path
    contents: dict[str, bytes]
    sources: tuple[str, ...]
    modes: dict[str, int] = dataclasses.field(default_factory=dict)
    """Each file's permission bits as read: a solution that cannot write a file may still chmod it (to 000, say)."""

    @property
    def folder(self) -> pathlib.Path:
        return self.path.parent

    @property
    def name(self) -> str:
        """The file's own entry in ``contents``."""
        return self.path.name

    @classmethod
    def take(
        cls,
        path: str | os.PathLike,
        skip: frozenset = frozenset(),
        read: dict | None = None,
        depth: int = _SOURCE_DEPTH,
    ) -> Snapshot:
        """Read ``path`` and the sources beside it (``sources_of(its folder, skip, depth)``); ParameterError naming a
        file that cannot be read, or a folder that holds more than ``MAX_FILES`` files or ``MAX_BYTES`` bytes of
        them. ``read``: the files read so far (path → bytes), shared by snapshots of files in one folder."""
        read = {} if read is None else read

        def _read(file: pathlib.Path) -> bytes:
            if file not in read:
                read[file] = _read_file(file)
            return read[file]

        path = pathlib.Path(path).resolve()  # a link's target's folder: where Python would find its helpers
        folder = path.parent
        found = sources_of(folder, skip, depth)
        if len(found) > MAX_FILES:
            raise ParameterError(
                f"{_shown(folder)} holds more than {MAX_FILES} source files within {_SOURCE_DEPTH} levels of folders, "
                f"all of which {_shown(path.name)} may read: put the pair in a folder of its own."
            )
        contents = {path.name: _read(path)}
        total = len(contents[path.name])
        found = [source for source in found if not source.is_symlink()]  # a link is read where it leads, or is fake
        for source in found:
            relative = str(source.relative_to(folder))
            if relative not in contents:
                contents[relative] = _read(source)
                total += len(contents[relative])
            if total > MAX_BYTES:
                raise ParameterError(
                    f"the source files in {_shown(folder)} (which {_shown(path.name)} may read) exceed "
                    f"{MAX_BYTES // 2**20} MB: put the pair in a folder of its own."
                )
        modes = {}
        for relative in contents:
            with contextlib.suppress(OSError):
                modes[relative] = stat.S_IMODE((folder / relative).stat().st_mode)
        return cls(path, contents, tuple(str(p.relative_to(folder)) for p in found), modes)

    def digest(self, relative: str) -> str:
        """The SHA-256 (hex) of the file ``relative`` as it was read."""
        return hashlib.sha256(self.contents[relative]).hexdigest()

    def changed(self) -> list[str]:
        """The files (relative paths) whose bytes or permission bits differ from the snapshot now, or that are gone."""
        return [
            relative
            for relative, data in self.contents.items()
            if not _holds(self.folder / relative, data)
            or (relative in self.modes and _mode(self.folder / relative) != self.modes[relative])
        ]

    def restore(self, relative: str) -> None:
        """Write the file's snapshot back in its place (a new file, renamed over whatever is there); OSError if it
        cannot be."""
        target = self.folder / relative
        descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".fpa-restore")
        try:
            with os.fdopen(descriptor, "wb") as out:  # a name of its own: no link planted there is followed
                out.write(self.contents[relative])
            if relative in self.modes:  # mkstemp's file is 0600: the mode the file had, not that one
                os.chmod(temporary, self.modes[relative])
            os.replace(temporary, target)
        finally:
            pathlib.Path(temporary).unlink(missing_ok=True)

    def encoded(self) -> dict[str, str]:
        """What a process imports from (``decoded``): the file itself and the ``.py`` files of ``contents``, as JSON
        data (base64). The other sources (an extension's ``.cu``) are read from the disk by the user's code."""
        return {
            relative: base64.b64encode(data).decode("ascii")
            for relative, data in self.contents.items()
            if relative == self.name or relative.endswith(".py")
        }

    @staticmethod
    def decoded(encoded: dict[str, str]) -> dict[str, bytes]:
        """The files ``encoded`` holds: relative path → bytes (what ``usercode.UserFile`` imports from)."""
        return {relative: base64.b64decode(text) for relative, text in encoded.items()}


def _read_file(path: pathlib.Path) -> bytes:
    if not path.is_file():  # a FIFO would block the read for ever, a folder fails it
        raise ParameterError(f"Cannot read {_shown(path)}: it is not a regular file.")
    try:
        if path.stat().st_size > MAX_BYTES:  # asked before reading: a sparse file of terabytes costs nothing to make
            raise ParameterError(f"{_shown(path)} holds more than {MAX_BYTES // 2**20} MB: it is no source file.")
        with open(path, "rb") as file:
            return file.read(MAX_BYTES + 1)
    except OSError as error:
        raise ParameterError(f"Cannot read {_shown(path)}: {error.strerror}.") from None


def _holds(path: pathlib.Path | str, data: bytes) -> bool:
    """Whether the file ``path`` holds exactly ``data`` (read no further than that: it may have become a huge one; and
    not at all if it has become anything but a regular file: a FIFO would block the read for ever)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    with os.fdopen(descriptor, "rb") as file:
        return stat.S_ISREG(os.fstat(descriptor).st_mode) and file.read(len(data) + 1) == data


def _mode(path: pathlib.Path) -> int | None:
    """The permission bits of ``path`` (not following a link planted there), None where it cannot be read."""
    try:
        return stat.S_IMODE(os.lstat(path).st_mode)
    except OSError:
        return None


def _shown(path) -> str:
    from ..records import safe_text

    return repr(safe_text(str(path)))


@dataclasses.dataclass(frozen=True)
class Given:
    """What a pair's job is given: the problem's snapshot and the solution's."""

    problem: Snapshot
    solution: Snapshot

    @classmethod
    def take(cls, problem, solution, depth: int = 0) -> Given:
        """Both files and the sources beside them, ``depth`` levels of subfolders deep (a single pair may lie in a
        crowded folder, ``/tmp`` say: by default the folder itself; a triage reads deeper,
        ``triage.keys.snapshots``)."""
        return cls(Snapshot.take(problem, depth=depth), Snapshot.take(solution, depth=depth))

    def changed(self) -> list[str]:
        """The paths of the given files whose bytes differ now from when they were read (each named once)."""
        return list(self._changed())

    def restore(self) -> tuple[list[str], list[str]]:
        """Put every changed file back as it was read: (the paths put back, 'path: why not' for the others)."""
        restored, failed = [], []
        for path, (snapshot, relative) in self._changed().items():
            try:
                snapshot.restore(relative)
                restored.append(path)
            except OSError as error:
                failed.append(f"{path}: {error.strerror or error}")
        return restored, failed

    def _changed(self) -> dict[str, tuple[Snapshot, str]]:
        found = {}
        for snapshot in (self.problem, self.solution):
            for relative in snapshot.changed():
                found.setdefault(str(snapshot.folder / relative), (snapshot, relative))
        return found


class Journal:
    """A job's given files, as they were read, on disk while it runs (``with Journal(given):``).

    fpa puts back what a solution edits when the job ends (``Given.restore``), but a solution can end fpa itself
    first (SIGKILL), and its edit would stand: the next run would read the edited problem as the reference. So
    each job leaves this record while it runs, removed when it ends however it ends but by SIGKILL. A record whose
    writer is gone is stale: ``stale_edits`` names the files that differ from it, and a run given one of them is
    refused until the user puts the file back or deletes the record (an edit of their own). A stale record whose
    files are all as recorded is simply removed.
    """

    def __init__(self, given: Given):
        from .places import cache_dir

        self.given = given
        self.path = cache_dir("journal") / f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:12]}.json"

    def __enter__(self) -> Journal:
        files = {
            str(snapshot.folder / relative): base64.b64encode(data).decode()
            for snapshot in (self.given.problem, self.given.solution)
            for relative, data in snapshot.contents.items()
        }
        record = {"host": socket.gethostname(), "pid": os.getpid(), "files": files}
        temporary = self.path.with_name(f".{self.path.name}.part")
        temporary.write_text(json.dumps(record))
        os.replace(temporary, self.path)
        return self

    def __exit__(self, *exc) -> None:
        self.path.unlink(missing_ok=True)

    @staticmethod
    def stale_edits(snapshots) -> list[str]:
        """'path (as it was read: copy)' for each file of ``snapshots`` that a stale record holds otherwise (see the
        class docstring), the copy written beside the record; stale records that nothing differs from are removed."""
        from .places import cache_dir

        read = {str(s.folder / relative): data for s in snapshots for relative, data in s.contents.items()}
        found = []
        for record_path in sorted(cache_dir("journal").glob("*.json")):
            try:
                record = json.loads(record_path.read_text())
                if record["host"] != socket.gethostname() or _alive(int(record["pid"])):
                    continue
                files = {path: base64.b64decode(text) for path, text in record["files"].items()}
            except (OSError, ValueError, KeyError, TypeError):
                continue  # not a record of ours, or one being written
            changed = [path for path, data in files.items() if not _holds(path, data)]
            if not changed:  # nothing stayed changed: the record, and copies written beside it before, go
                for copy in record_path.parent.glob(f"{record_path.stem}-*"):
                    copy.unlink(missing_ok=True)
                record_path.unlink(missing_ok=True)
            for number, path in enumerate(changed):
                if path in read:
                    copy = record_path.with_name(f"{record_path.stem}-{number}-{pathlib.Path(path).name}")
                    copy.write_bytes(files[path])
                    found.append(f"{path} (as it was read: {copy}; the record: {record_path})")
        return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
