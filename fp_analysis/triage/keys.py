"""Resuming a triage: which stored row is a pair's. Each pair's files are read before any pair runs (its snapshot);
its key covers those contents, the check's options and the tool's version, and the store is searched by key; a
row stored under another atol is the pair's too, its check judged again (``analysis_key``). A
triage that stores also checks first that the store can take its rows (it is what a resumed triage reads).
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import tempfile

from ..errors import ParameterError
from ..model.verdict import Outcome
from ..numerics.allclose import AtolToPass
from ..options import ExplainOptions
from ..run.snapshot import Given, Snapshot
from .discovery import Pair, solution_folders
from .rows import identity

__all__ = ["analysis_key", "pair_key", "require_writable", "snapshots", "stored_rows", "tool_version"]


def tool_version() -> str:
    """fp_analysis's installed version ("unknown" where it is not installed): a stored row is reused only under it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fp_analysis")
    except PackageNotFoundError:
        return "unknown"


def snapshots(pairs: list[Pair]) -> dict[str, Given]:
    """Each pair's files, read before any pair runs (``fp_analysis.run.snapshot``): a file several pairs share (their
    problem, the helpers beside it) is read once."""
    skip, read, taken = solution_folders(pairs), {}, {}

    def snapshot(path: pathlib.Path) -> Snapshot:
        path = path.resolve()
        if path not in taken:
            taken[path] = Snapshot.take(path, skip, read)
        return taken[path]

    return {pair.id: Given(snapshot(pair.problem), snapshot(pair.solution)) for pair in pairs}


def pair_key(given: Given, options: ExplainOptions) -> str:
    """What makes a stored row this pair's: both files' contents and the source files each may read
    (``sources_of``; conservative: where solutions lie beside their problem, editing one runs that folder's pairs
    again), every option of the check (``options``, its device resolved: a CPU result is never reused on a GPU; the
    timeout among them), the tool's version."""
    return _key(given, options.to_json())


def analysis_key(given: Given, options: ExplainOptions) -> str:
    """``pair_key`` under every option but the check's atol: what the explanation depends on. Nothing the engine
    does reads the atol (``explain.kernelbench._severity``, ``explain.job._batch_subset``), and each row keeps the
    smallest atol at which its check passes (``numerics.allclose``), so a row stored at one atol is this pair's at
    any other, its check judged again."""
    settings = {k: v for k, v in options.to_json().items() if k != "atol"}
    return _key(given, {**settings, "key": "analysis"})


def _key(given: Given, settings: dict) -> str:
    problem, solution = given.problem, given.solution
    parts = [problem.digest(problem.name), solution.digest(solution.name), json.dumps(settings, sort_keys=True),
             tool_version()]  # fmt: skip
    parts += [
        f"{relative}:{snapshot.digest(relative)}" for snapshot in (problem, solution) for relative in snapshot.sources
    ]
    # surrogateescape: a file name's undecodable bytes are hashed as the bytes they are
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def stored_rows(
    pairs: list[Pair], keys: dict[str, tuple[str, str]], directory, unreadable: list[str], atol: float
) -> tuple[dict[str, dict], set[str]]:
    """(the stored row of each pair, by id, the ids of those judged again): the newest triage row of the pair's key
    (``keys``: by id, (``pair_key``, ``analysis_key``)); else, the newest of its analysis key at another atol, its
    check judged again at ``atol`` from the smallest atol that passes it (rows that do not know it are not
    reused). Internal errors are left out (they are run again); each row is shown as the pair it is now
    (``rows.identity``). Store files that cannot be read are skipped and named in ``unreadable`` (for the user,
    not as raw warnings)."""
    import warnings

    from ..store import read_store

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = read_store(directory, command="triage")
    unreadable += [str(w.message) for w in caught]
    if table.num_rows == 0 or "pair_key" not in table.column_names:
        return {}, set()
    wanted = {key for both in keys.values() for key in both}
    exact, analysed = {}, {}
    for row in table.to_pylist():  # time order: a later row replaces an earlier one
        # an internal error says nothing of the pair (a node that died, a full disk): run it again
        if row.get("verdict") == Outcome.INTERNAL_ERROR.value:
            continue
        row = {k: v for k, v in row.items() if not k.startswith("meta_")}
        if row.get("pair_key") in wanted:
            exact[row["pair_key"]] = row
        if row.get("analysis_key") in wanted and (row.get("check_passed") is None or row.get("atol_to_pass_known")):
            analysed[row["analysis_key"]] = row
    found, rejudged = {}, set()
    for pair in pairs:
        key, analysis = keys[pair.id]
        if key in exact:
            found[pair.id] = {**exact[key], **identity(pair, key, analysis)}
        elif analysis in analysed:
            row = analysed[analysis]
            passed = None if row["check_passed"] is None else AtolToPass(True, row["atol_to_pass"]).passes(atol)
            found[pair.id] = {**row, "check_passed": passed, **identity(pair, key, analysis)}
            rejudged.add(pair.id)
    return found, rejudged


def require_writable(directory) -> None:
    """The store must take the rows as they come (it is what a resumed triage reads): refuse at once if not."""
    from ..store import store_dir

    path = None
    try:
        path = pathlib.Path(directory).expanduser() if directory is not None else None
        path = path or store_dir()  # it creates the default folder: an OSError is the same refusal
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".probe-", suffix=".part"):
            pass
    except (OSError, RuntimeError) as error:  # RuntimeError: a ~user/ path whose user has no home
        where, reason = str(path or os.environ.get("FPA_STORE")), getattr(error, "strerror", None) or error
        raise ParameterError(
            f"The results store {where!r} cannot be written ({reason}): set FPA_STORE to a folder "
            "that can, or pass --no-store (then nothing is resumable)."
        ) from None
