"""The local results store: every ``fpa report`` / ``fpa explain`` run appends its rows, with metadata, for notebooks.

Layout: the store is a directory of Parquet files, one immutable file per run, named
``run-<UTC timestamp>-<run id>.parquet`` so that a name sort is a time sort. Each row is one result
row of the run with every metadata field of the run (command, flags, seed, device, package versions,
git commit, ...) added as a ``meta_*`` column, so a single file, or any concatenation of files, is
self-describing.

Why this design:

* **Crash safety without a lock.** A run is written to a temporary name in the same directory
  (``.tmp-*.part``), flushed and fsync'd, then published with ``os.replace``, which is atomic on POSIX
  when source and target are on one filesystem (hence the same directory). A run killed mid-write
  therefore leaves at most an invisible temporary file, never partial rows; a reader sees a run
  completely or not at all and needs no lock, and concurrent writers never touch each other's files.
  A temporary's name carries its writer's host and process id, so the next write (``append_run`` calls
  ``clean_temporaries``) removes those of writers that are dead, and any older than an hour.
* **One bad file hides nothing.** A run file that cannot be read (truncated, junk, empty: written by
  something else, or damaged on disk) is skipped by ``read_store`` with a warning naming it.
* **One file per run, never rewritten.** Appending to a shared file would need a lock and could be
  torn by a crash; rewriting a growing file costs O(store size) per run. Immutable files make appends
  O(run size) and make a run's provenance the file itself.
* **Parquet, plain folder.** Any tool reads it without this package: ``pyarrow.dataset``,
  ``pandas.read_parquet(dir)``, DuckDB ``read_parquet('dir/run-*.parquet', union_by_name=true)``,
  ``polars.scan_parquet('dir/run-*.parquet')``. Temporaries end in ``.part`` and start with a dot, so
  neither a ``*.parquet`` glob nor pyarrow's dataset discovery (which skips ``.``/``_`` names) sees them.
* **Runs may differ in columns.** ``read_store`` unifies schemas by name: a column a run lacks reads as
  null, and int / float columns of different runs promote to float.

Nested values (dicts, lists, tuples) in rows or metadata are stored as JSON strings with sorted keys,
so equal values compare equal as strings in SQL and ``json.loads`` restores them.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import importlib.metadata
import json
import numbers
import os
import pathlib
import platform
import re
import socket
import subprocess
import tempfile
import time
import uuid
import warnings
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .errors import FpaError, ParameterError

__all__ = [
    "UnreadableRunWarning",
    "append_run",
    "clean_temporaries",
    "prepare",
    "read_store",
    "run_metadata",
    "store_dir",
]

# Prefix of metadata columns; rows may not use it, so a row key can never shadow run metadata.
_META_PREFIX = "meta_"

# Published files and temporaries. Temporaries start with a dot and do not end in ".parquet" so that
# neither glob-based readers nor pyarrow's dataset discovery can pick up a half-written file.
_RUN_GLOB = "run-*.parquet"
_TMP_PREFIX = ".tmp-"
_TMP_SUFFIX = ".part"

# Distributions whose versions every run records: the package itself and the numerics it depends on.
_VERSIONED = ("fp_analysis", "torch", "numpy", "mpmath", "hypothesis", "numba")

# run_id ends up in a file name: letters, digits, '-' and '_' only (uuid4().hex qualifies).
_RUN_ID_RE = re.compile(r"[0-9A-Za-z_-]{1,64}")

# Seconds allowed to `git rev-parse`; metadata collection must never hang a run.
_GIT_TIMEOUT_S = 5.0

# A temporary whose writer is gone is removed only once it is this old: a writer in another container that
# shares this folder and host name (but not our process ids) is then long done with its file.
_DEAD_WRITER_AGE_S = 60.0

# This host, as it appears in temporaries' names: a short hash, so any host name makes a safe file name.
_HOST = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
_TMP_OWNER_RE = re.compile(r"\.tmp-([0-9a-f]{8})-(\d+)-")


class UnreadableRunWarning(UserWarning):
    """A file of the store could not be read and was left out of ``read_store``'s table."""


def store_dir() -> pathlib.Path:
    """Return the store directory, created on demand.

    ``$FPA_STORE`` if set and non-empty, else ``$XDG_DATA_HOME/fp_analysis/store`` (XDG Base Directory
    spec; ``$XDG_DATA_HOME`` defaults to ``~/.local/share``).
    """
    env = os.environ.get("FPA_STORE")
    if env:
        path = pathlib.Path(env).expanduser()
    else:
        data_home = os.environ.get("XDG_DATA_HOME") or pathlib.Path.home() / ".local" / "share"
        path = pathlib.Path(data_home).expanduser() / "fp_analysis" / "store"
    path.mkdir(parents=True, exist_ok=True)
    return path


def run_metadata(
    command: str, flags: dict, seed: int | None, device: str, torch_versions: dict | None = None
) -> dict[str, Any]:
    """Return the metadata of one run: ids, time, invocation, environment and versions (flat, JSON-able).

    ``torch_versions``: torch's CUDA and cuDNN versions as a job's worker reported them
    (``run.supervisor.JobResult.versions``); without them they are read here (``backends.versions``), importing
    torch."""
    if not isinstance(command, str) or not command:
        raise ParameterError(f"Got command={command!r}, but command must be a non-empty string (e.g. 'report').")
    if not isinstance(flags, dict):
        raise ParameterError(f"Got flags of type {type(flags).__name__}, but flags must be a dict.")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
        raise ParameterError(f"Got seed={seed!r}, but seed must be an int or None.")
    if not isinstance(device, str):
        raise ParameterError(f"Got device={device!r}, but device must be a string (e.g. 'cuda:0 NVIDIA H100').")
    meta: dict[str, Any] = {
        "run_id": uuid.uuid4().hex,
        "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds"),
        "command": command,
        "flags": _to_json(flags, "flags"),
        "seed": None if seed is None else int(seed),
        "device": device,
    }
    for dist in _VERSIONED:
        meta[f"{dist}_version"] = _dist_version(dist)
    if not torch_versions:
        from .numerics.backends import versions as torch_backend_versions  # torch: only where no worker reported them

        torch_versions = torch_backend_versions()
    meta.update(torch_versions)
    meta["python_version"] = platform.python_version()
    meta["platform"] = platform.platform()
    meta["git_commit"] = _git_commit()
    return meta


def prepare() -> None:
    """Pay the first-write costs of pyarrow now (pandas' parts that ``pa.array`` imports, the Parquet writer's
    start), by writing a one-row table of each column type to memory: ``fpa`` calls it in a thread while the
    job runs, since its supervisor only waits then and those costs were 0.4 s of a small pair's wall time."""
    table = _build_table([{"f": 1.5, "i": 1, "b": True, "s": "x", "n": None}], {"command": "prepare"})
    pq.write_table(table, pa.BufferOutputStream())


def append_run(rows: list[dict], metadata: dict, *, directory: str | os.PathLike | None = None) -> pathlib.Path:
    """Return the path of the new run file, written atomically, holding ``rows`` plus ``meta_*`` columns.

    ``rows`` is a non-empty list of dicts with string keys; values are str / int / float / bool / None
    (numpy scalars are accepted) or dicts / lists / tuples, which are stored as JSON strings. Rows may
    have different keys: a key a row lacks is null there. ``metadata`` is what ``run_metadata`` returns
    (at least ``run_id`` and ``timestamp``); each field becomes a column ``meta_<field>``.
    """
    if not isinstance(rows, list) or not rows:
        got = "an empty list" if isinstance(rows, list) else f"a {type(rows).__name__}"
        raise ParameterError(f"Got {got} for rows, but rows must be a non-empty list of dicts.")
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise ParameterError(f"Got rows[{i}] of type {type(row).__name__}, but every row must be a dict.")
    if not isinstance(metadata, dict):
        raise ParameterError(f"Got metadata of type {type(metadata).__name__}, but metadata must be a dict.")
    run_id = metadata.get("run_id")
    if not isinstance(run_id, str) or not _RUN_ID_RE.fullmatch(run_id):
        raise ParameterError(
            f"Got metadata['run_id']={run_id!r}, but it must be 1-64 letters, digits, '-' or '_' "
            "(use run_metadata() to make metadata)."
        )
    stamp = _file_stamp(metadata.get("timestamp"))

    table = _build_table(rows, metadata)
    directory = _resolve(directory, create=True)
    final = directory / f"run-{stamp}-{run_id}.parquet"
    # Published files are immutable; os.replace would silently overwrite one whose run_id is reused.
    if final.exists():
        raise ParameterError(
            f"Got metadata['run_id']={run_id!r}, but {final.name} already exists; run ids must be new."
        )

    with contextlib.suppress(OSError):  # cleaning is a courtesy: it must never cost the run being written
        clean_temporaries(directory)
    prefix = f"{_TMP_PREFIX}{_HOST}-{os.getpid()}-{final.stem}-"
    fd, tmp_name = tempfile.mkstemp(prefix=prefix, suffix=_TMP_SUFFIX, dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            pq.write_table(table, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp_name, final)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    _fsync_dir(directory)
    return final


def read_store(directory: str | os.PathLike | None = None, command: str | None = None) -> pa.Table:
    """Return all published runs as one table (time order), optionally only those of ``command``.

    Schemas are unified by column name: a column some runs lack is null in their rows; int and float
    columns promote to float. An empty or missing store gives an empty table. A run file that cannot be
    read is skipped with an ``UnreadableRunWarning`` that names it. Use ``.to_pandas()`` on the result for
    a DataFrame (needs pandas).
    """
    if command is not None and not isinstance(command, str):
        raise ParameterError(f"Got command={command!r}, but command must be a string or None.")
    directory = _resolve(directory, create=False)
    paths = sorted(directory.glob(_RUN_GLOB)) if directory.is_dir() else []
    if not paths:
        return pa.table({})
    tables = []
    for path in paths:
        try:
            tables.append(pq.read_table(path))
        except (pa.ArrowException, OSError) as error:
            warnings.warn(f"skipped {path}: it is not a readable Parquet file ({error})", UnreadableRunWarning, 2)
    if not tables:
        return pa.table({})
    try:
        table = pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise FpaError(
            f"Runs in {directory} store one column with incompatible types, so they cannot be read as one table: {e}"
        ) from e
    if command is not None:
        if f"{_META_PREFIX}command" not in table.column_names:
            return table.slice(0, 0)
        table = table.filter(pc.equal(table[f"{_META_PREFIX}command"], command))
    return table


def clean_temporaries(directory: str | os.PathLike | None = None, older_than_s: float = 3600) -> list[pathlib.Path]:
    """Return the temporary files removed: those of writers on this host that are no longer running (once a
    minute old), and any last modified over ``older_than_s`` ago (writers on other hosts sharing the folder).

    A live writer's temporary is younger than any sensible ``older_than_s``; removing one (e.g. with
    ``older_than_s=0`` while a run is being written) makes that writer fail, never a reader.
    """
    if isinstance(older_than_s, bool) or not isinstance(older_than_s, numbers.Real) or not older_than_s >= 0:
        raise ParameterError(f"Got older_than_s={older_than_s!r}, but it must be a number of seconds >= 0.")
    directory = _resolve(directory, create=False)
    if not directory.is_dir():
        return []
    now = time.time()
    removed = []
    for path in sorted(directory.glob(f"{_TMP_PREFIX}*")):
        try:
            age = now - path.stat().st_mtime
            if age >= older_than_s or (age >= min(older_than_s, _DEAD_WRITER_AGE_S) and _writer_is_gone(path.name)):
                path.unlink()
                removed.append(path)
        except FileNotFoundError:  # another cleaner, or the writer itself, got there first
            continue
    return removed


# --------------------------------------------------------------------------------------------- helpers


def _writer_is_gone(name: str) -> bool:
    """True when the temporary ``name`` was written by a process of this host that no longer runs."""
    match = _TMP_OWNER_RE.match(name)
    if match is None or match.group(1) != _HOST:
        return False
    try:
        os.kill(int(match.group(2)), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):  # alive under another user; or not a pid at all
        return False
    return False


def _resolve(directory: str | os.PathLike | None, *, create: bool) -> pathlib.Path:
    if directory is None:
        return store_dir()
    if not isinstance(directory, (str, os.PathLike)):
        raise ParameterError(f"Got directory={directory!r}, but directory must be a path or None.")
    path = pathlib.Path(directory).expanduser()
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def _file_stamp(timestamp: Any) -> str:
    """Return the compact, sortable, filename-safe UTC form of an ISO timestamp (naive means UTC)."""
    if not isinstance(timestamp, str):
        raise ParameterError(f"Got metadata['timestamp']={timestamp!r}, but it must be an ISO 8601 string.")
    try:
        # Python 3.10's fromisoformat does not accept a trailing 'Z'.
        when = _dt.datetime.fromisoformat(timestamp[:-1] + "+00:00" if timestamp.endswith("Z") else timestamp)
    except ValueError:
        raise ParameterError(f"Got metadata['timestamp']={timestamp!r}, but it must be an ISO 8601 string.") from None
    when = when.replace(tzinfo=_dt.timezone.utc) if when.tzinfo is None else when.astimezone(_dt.timezone.utc)
    return when.strftime("%Y%m%dT%H%M%S.%fZ")


def _json_default(value: Any) -> Any:
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _to_json(value: Any, where: str) -> str:
    try:
        return json.dumps(value, sort_keys=True, default=_json_default)
    except (TypeError, ValueError) as e:
        raise ParameterError(f"Got a value in {where} that cannot be stored as JSON: {e}.") from None


def _cell(value: Any, where: str) -> Any:
    """Return ``value`` as a Parquet-storable scalar: JSON for containers, Python scalars for numpy ones."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (dict, list, tuple)):
        return _to_json(value, where)
    if hasattr(value, "item") and callable(value.item) and getattr(value, "shape", None) == ():  # numpy scalar
        return value.item()
    raise ParameterError(
        f"Got {where} of type {type(value).__name__}, but values must be str, int, float, bool, None, dict or list."
    )


def _column(name: str, values: list[Any], where: str) -> pa.Array:
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:
        kinds = sorted({type(v).__name__ for v in values if v is not None})
        raise ParameterError(
            f"Got {where} column {name!r} with values of types {kinds} that do not fit one column type "
            f"(int and float may mix, bool and str may not mix with numbers; ints must fit in 64 bits): {e}"
        ) from None


def _build_table(rows: list[dict], metadata: dict) -> pa.Table:
    names: dict[str, None] = {}  # insertion-ordered set: columns in first-seen order
    for i, row in enumerate(rows):
        for key in row:
            if key not in names:
                if not isinstance(key, str) or not key:
                    raise ParameterError(f"Got key {key!r} in rows[{i}], but row keys must be non-empty strings.")
                if key.startswith(_META_PREFIX):
                    raise ParameterError(
                        f"Got key {key!r} in rows[{i}], but keys starting with {_META_PREFIX!r} are reserved "
                        "for metadata."
                    )
                names[key] = None
    columns: dict[str, pa.Array] = {}
    for name in names:
        values = [_cell(row.get(name), f"rows[{i}][{name!r}]") for i, row in enumerate(rows)]
        columns[name] = _column(name, values, "rows")
    n = len(rows)
    for key, value in metadata.items():
        if not isinstance(key, str) or not key:
            raise ParameterError(f"Got metadata key {key!r}, but metadata keys must be non-empty strings.")
        cell = _cell(value, f"metadata[{key!r}]")
        column = _column(key, [cell], "metadata")
        # One value repeated: a dictionary-free repeat keeps the column's plain type for every reader.
        columns[_META_PREFIX + key] = pa.repeat(column[0], n) if n else column.slice(0, 0)
    return pa.table(columns)


def _fsync_dir(directory: pathlib.Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where directories cannot be opened (Windows)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def _dist_version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _git_commit() -> str | None:
    """Return HEAD of the git checkout the package is imported from, or None; never raise.

    Only when the package's parent directory is the checkout's top level: an installed copy inside some
    other repository (a venv in a project, say) must not report that repository's commit.
    """
    root = pathlib.Path(__file__).resolve().parent.parent
    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            check=True,
        ).stdout.splitlines()
        if len(top) != 2 or pathlib.Path(top[0]).resolve() != root:
            return None
        return top[1]
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
