"""``fpa triage``: KernelBench's check and ``fpa explain`` on many problem/solution pairs, in parallel, resumable.

Pairs come from a folder laid out as KernelBench runs are (``discover``) or from a CSV/JSON manifest. Each pair
is explained by ``fp_analysis.jobs.explain_files`` — its own worker and candidate processes, each call into the
user's code under the timeout — so one pair's crash, hang, exit or segfault is that pair's row, never the end of
the run. Jobs run ``workers`` at a time; each finished pair is appended to the results store at once, as a run
of its own (``command="triage"``), so a triage killed midway loses only the pairs under way: the next one reuses
every stored pair whose files (by SHA-256), check options, device and fp_analysis version are the same.

This module imports no torch: the process that supervises the jobs stays light.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import functools
import hashlib
import json
import os
import pathlib
import queue
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable

from .errors import ExitCode, FpaError, OutOfScopeError, ParameterError, UserCodeError
from .jobs import explain_files
from .options import (
    check_count,
    check_device,
    check_reference_mode,
    check_seconds,
    check_seed,
    check_tolerance,
)
from .worker import terminate_as_interrupt

__all__ = ["FALSE_PASS_VERDICTS", "Pair", "discover", "summarize", "triage"]

# Verdicts that mean the candidate is wrong: a pair with one of them whose KernelBench check passed is a false pass.
FALSE_PASS_VERDICTS = ("bug", "parameter_mismatch", "nonfinite")
# The rows of pairs that did not get a verdict from the engine: the user's code failed (exit 3), the Model is beyond
# what the engine models (exit 2, naming what), the files are not a KernelBench pair (exit 2: no ModelNew, say),
# a failure of ours (exit 4).
USER_CODE_FAILED, OUT_OF_SCOPE, USAGE_ERROR, INTERNAL_ERROR = (
    "user_code_failed", "out_of_scope", "usage_error", "internal_error"
)
_PROBLEM_FILE = "problem.py"
_NOT_SOLUTIONS = ("setup.py", "conftest.py")


@dataclasses.dataclass(frozen=True)
class Pair:
    """One problem file and one solution file to explain; ``expected`` an optional label (a verdict) to compare."""

    id: str
    problem: pathlib.Path
    solution: pathlib.Path
    expected: str | None = None


def discover(path: str | os.PathLike) -> list[Pair]:
    """The pairs under ``path``: a folder, or a manifest (.csv or .json).

    Folder: every folder below ``path`` holding a ``problem.py`` is a problem; its solutions are the other .py
    files in it and every .py file in the folders below it (KernelBench runs keep one sample per folder), except
    names starting with ``_`` (helper modules) or ``.``, ``setup.py``, what hidden folders hold, and anything that
    is not a regular file. A pair's id is its solution's path relative to ``path``, without ``.py``.
    Manifest: rows (a CSV with a header, or a JSON list of objects) with ``problem`` and ``solution``,
    optional ``id`` and ``expected``; relative paths are relative to the manifest's folder.
    """
    root = pathlib.Path(path)
    if root.is_file():
        return _from_manifest(root)
    if not root.is_dir():
        raise ParameterError(f"Got PATH={str(path)!r}, which is neither a folder nor a manifest file (.csv, .json).")
    pairs = []
    for problem in sorted(root.rglob(_PROBLEM_FILE)):
        folder = problem.parent
        nested = {p.parent for p in folder.rglob(_PROBLEM_FILE)} - {folder}  # problems below this one are theirs
        for solution in sorted(folder.rglob("*.py")):
            parts = solution.relative_to(folder).parts
            if (
                solution == problem
                or not solution.is_file()  # a folder named x.py, a FIFO, a dangling link
                or any(part.startswith((".", "_")) for part in parts)  # helpers, .ipynb_checkpoints
                or solution.name in _NOT_SOLUTIONS
                or any(n in solution.parents for n in nested)
            ):
                continue
            pairs.append(Pair(str(solution.relative_to(root).with_suffix("")), problem, solution))
    if not pairs:
        raise ParameterError(f"Got PATH={str(path)!r}, but no folder below it holds a {_PROBLEM_FILE} and a solution.")
    return pairs


def _from_manifest(path: pathlib.Path) -> list[Pair]:
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".json"):
        raise ParameterError(f"Got manifest {str(path)!r}, but a manifest must end in .csv or .json.")
    try:
        # utf-8-sig: spreadsheets write a byte-order mark; newline="": quoted newlines stay in their field
        with open(path, encoding="utf-8-sig", newline="") as handle:
            if suffix == ".json":
                rows = json.load(handle)
                rows = rows.get("pairs") if isinstance(rows, dict) else rows
            else:
                rows = list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, csv.Error) as error:
        raise ParameterError(f"Got manifest {str(path)!r}, which cannot be read: {error}") from None
    if not isinstance(rows, list) or not rows:
        raise ParameterError(f"Got manifest {str(path)!r}, but it lists no pairs (rows of problem, solution).")
    pairs = []
    for number, row in enumerate(rows, 1):
        if not isinstance(row, dict) or not row.get("problem") or not row.get("solution"):
            raise ParameterError(f"Manifest {str(path)!r}, row {number}: give problem and solution, got {row!r}.")
        problem, solution = (path.parent / str(row[k]) for k in ("problem", "solution"))
        given = row.get("id")
        pair_id = str(given) if given not in (None, "") else _default_id(solution, path.parent)
        expected = row.get("expected")
        pairs.append(Pair(pair_id, problem, solution, None if expected in (None, "") else str(expected)))
    ids = Counter(p.id for p in pairs)
    if twice := [i for i, n in ids.items() if n > 1]:
        raise ParameterError(f"Manifest {str(path)!r} names these ids more than once: {twice[:5]}.")
    return pairs


def _default_id(solution: pathlib.Path, folder: pathlib.Path) -> str:
    """A manifest row's id when it gives none: the solution's path from the manifest's folder, without .py (the
    same wherever triage runs from)."""
    try:
        return str(solution.relative_to(folder).with_suffix(""))
    except ValueError:  # an absolute path elsewhere
        return str(solution.with_suffix(""))


def _sha256(path: pathlib.Path) -> str:
    if not path.is_file():  # a FIFO would block the read for ever, a folder fails it
        raise ParameterError(f"Cannot read {str(path)!r}: it is not a regular file.")
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as error:
        raise ParameterError(f"Cannot read {str(path)!r}: {error.strerror}.") from None


def _folder_sources(folder: pathlib.Path, known: dict) -> list[str]:
    """The hashes of the .py files beside a problem or solution: the helper modules it may import (conservative:
    where solutions lie beside their problem, editing one runs that folder's pairs again). ``known`` keeps each
    folder's answer for one triage: a problem folder is hashed once, not once per solution."""
    if folder not in known:
        known[folder] = [f"{p.name}:{_sha256(p)}" for p in sorted(folder.glob("*.py")) if p.is_file()]
    return known[folder]


def _tool_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fp_analysis")
    except PackageNotFoundError:
        return "unknown"


def _key(pair: Pair, options: dict, known: dict) -> str:
    """What makes a stored row this pair's: both files' contents and their folders' other .py files (helpers),
    the check's options (the timeout and the resolved device among them), the tool's version."""
    parts = [_sha256(pair.problem), _sha256(pair.solution), json.dumps(options, sort_keys=True), _tool_version()]
    parts += _folder_sources(pair.problem.parent, known) + _folder_sources(pair.solution.parent, known)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def _explain_row(pair: Pair, options: dict, timeout: float) -> dict:
    """The pair's row: its verdict and numbers, or how its job ended without one."""
    start = time.perf_counter()
    row = {"verdict": None, "explained": None, "check_passed": None, "max_abs": None, "candidate_vs_fp64": None,
           "reference_vs_fp64": None, "needed_atol": None, "error": None}  # fmt: skip
    try:
        explanation = explain_files(pair.problem, pair.solution, timeout=timeout, **options)
        mismatch = explanation.mismatch
        row.update(
            verdict=explanation.verdict,
            explained=explanation.explained,
            exit_code=int(ExitCode.OK if explanation.explained else ExitCode.NOT_EXPLAINED),
            check_passed=mismatch.get("failed_trials") == 0,
            max_abs=mismatch.get("max_abs"),
            candidate_vs_fp64=explanation.candidate_vs_fp64.get("max_abs"),
            reference_vs_fp64=explanation.reference_vs_fp64.get("max_abs"),
            needed_atol=explanation.recommended_tolerance.get("atol"),
        )
    except UserCodeError as error:
        row.update(verdict=USER_CODE_FAILED, exit_code=int(error.exit_code), error=str(error).splitlines()[0])
    except OutOfScopeError as error:
        row.update(verdict=OUT_OF_SCOPE, exit_code=int(error.exit_code), error=str(error).splitlines()[0])
    except FpaError as error:
        row.update(verdict=USAGE_ERROR, exit_code=int(error.exit_code), error=str(error).splitlines()[0])
    except Exception as error:  # one pair's internal failure is its row, never the end of the run
        row.update(verdict=INTERNAL_ERROR, exit_code=int(ExitCode.INTERNAL), error=f"{type(error).__name__}: {error}")
    row["seconds"] = time.perf_counter() - start
    return row


def _identity(pair: Pair, key: str) -> dict:
    """The fields of a row that say which pair it is: always the current pair's (a stored result may have been
    another pair's with the same contents, or this pair's under another id, folder or label)."""
    return {"pair_id": pair.id, "problem": str(pair.problem), "solution": str(pair.solution),
            "expected": pair.expected, "pair_key": key}  # fmt: skip


def _stored(directory, keys: set[str]) -> dict[str, dict]:
    """The newest stored triage row of each pair key in ``keys``."""
    from .store import read_store

    table = read_store(directory, command="triage")
    if table.num_rows == 0 or "pair_key" not in table.column_names:
        return {}
    found = {}
    for row in table.to_pylist():  # time order: a later row replaces an earlier one
        if row.get("pair_key") in keys:
            found[row["pair_key"]] = {k: v for k, v in row.items() if not k.startswith("meta_")}
    return found


def triage(
    pairs: list[Pair],
    *,
    device: str = "cpu",
    workers: int | None = None,
    timeout: float,
    trials: int = 5,
    seed: int = 42,
    atol: float = 1e-4,
    rtol: float = 1e-4,
    reference_mode: str | None = None,
    rerun: bool = False,
    store: bool = True,
    store_dir: str | os.PathLike | None = None,
    on_progress: Callable[[dict], None] | None = None,
) -> dict:
    """Explain every pair (see the module docstring); returns {"pairs": rows in ``pairs`` order, "summary": …,
    "ran": n, "reused": n}. ``on_progress`` gets {"done", "total", "verdicts", "pair"} after each pair."""
    if not pairs:
        raise ParameterError("Got no pairs to triage.")
    device = _resolved_device(device)
    workers = check_count("workers", workers if workers is not None else _default_workers(device))
    timeout = check_seconds("timeout", timeout)
    options = {
        "device": device,
        "trials": check_count("trials", trials),
        "seed": check_seed("seed", seed),
        "atol": check_tolerance("atol", atol),
        "rtol": check_tolerance("rtol", rtol),
        "reference_mode": None if reference_mode is None else check_reference_mode(reference_mode),
    }  # checked here, so that a bad option is one usage error and not every pair's
    known: dict = {}
    keys = {pair.id: _key(pair, {**options, "timeout": timeout}, known) for pair in pairs}
    if store:
        _require_writable(store_dir)
    rows = {} if rerun or not store else _stored(store_dir, set(keys.values()))
    done = {
        pair.id: {**rows[keys[pair.id]], **_identity(pair, keys[pair.id])} for pair in pairs if keys[pair.id] in rows
    }
    reused = len(done)
    verdicts = Counter(row["verdict"] for row in done.values())
    metadata, not_stored = None, []
    todo = [pair for pair in pairs if pair.id not in done]
    run = functools.partial(_explain_row, options=options, timeout=timeout)
    with _threads_per_job(workers), terminate_as_interrupt():
        for pair, result in _as_finished(todo, workers, run):
            row = {**_identity(pair, keys[pair.id]), **result}
            if store:
                from .store import append_run, run_metadata

                metadata = metadata or run_metadata("triage", options, seed, device)
                try:
                    append_run([row], {**metadata, "run_id": f"{metadata['run_id'][:16]}-{len(done)}"},
                               directory=store_dir)  # fmt: skip
                except (OSError, FpaError) as error:  # a full disk costs the resume, never the result
                    not_stored.append(f"{pair.id}: {error}")
            done[pair.id] = row
            verdicts[row["verdict"]] += 1
            if on_progress:
                on_progress({"done": len(done), "total": len(pairs), "verdicts": dict(verdicts), "pair": pair.id})
    ordered = [done[pair.id] for pair in pairs]
    return {"pairs": ordered, "summary": summarize(ordered, atol, rtol), "ran": len(todo), "reused": reused,
            "not_stored": not_stored}  # fmt: skip


def _require_writable(directory) -> None:
    """The store must take the rows as they come (it is what a resumed triage reads): refuse at once if not."""
    from .store import store_dir

    path = pathlib.Path(directory).expanduser() if directory is not None else None
    try:
        path = path or store_dir()  # it creates the default folder: an OSError is the same refusal
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".probe-", suffix=".part"):
            pass
    except OSError as error:
        where = str(path or os.environ.get("FPA_STORE"))
        raise ParameterError(
            f"The results store {where!r} cannot be written ({error.strerror or error}): set FPA_STORE to a folder "
            "that can, or pass --no-store (then nothing is resumable)."
        ) from None


def _as_finished(todo: list[Pair], workers: int, run: Callable[[Pair], dict]):
    """(pair, ``run(pair)``) for each pair of ``todo`` as it finishes, ``workers`` at a time.

    Daemon threads, not a ThreadPoolExecutor: an interrupted triage (Ctrl-C, SIGTERM) must end at once, not wait
    for the jobs under way (an executor's threads are joined at exit); the jobs' processes end with this one
    (each watches its parent, ``fp_analysis.worker``), and what was stored stays stored."""
    tasks, finished = queue.SimpleQueue(), queue.SimpleQueue()
    for pair in todo:
        tasks.put(pair)

    def work():
        while True:
            try:
                pair = tasks.get_nowait()
            except queue.Empty:
                return
            finished.put((pair, run(pair)))

    for _ in range(min(workers, len(todo))):
        threading.Thread(target=work, name="fpa-triage", daemon=True).start()
    for _ in todo:
        yield finished.get()


def _resolved_device(device: str) -> str:
    """ "cpu" or "cuda": auto resolved here (so a CPU result is never reused on a GPU host), and cuda refused at once
    where torch sees no GPU rather than in every pair's row."""
    device = check_device(device).value
    if device == "cpu":
        return device
    import torch  # only to ask for a GPU: the jobs run in their own processes

    if torch.cuda.is_available():
        return "cuda"
    if device == "cuda":
        raise ParameterError("Got --device cuda, but torch sees no CUDA device on this machine: use --device cpu.")
    return "cpu"


def _default_workers(device: str) -> int:
    """On a CPU a job per two cores (each job runs two processes); on a GPU one job (per-GPU workers are not
    built yet)."""
    if device == "cpu":
        return max(1, (os.cpu_count() or 2) // 2)
    return 1


@contextlib.contextmanager
def _threads_per_job(workers: int):
    """The jobs' processes share the cores: each gets its share of OpenMP threads, unless the user chose."""
    if "OMP_NUM_THREADS" in os.environ:
        yield
        return
    os.environ["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // workers))
    try:
        yield
    finally:
        os.environ.pop("OMP_NUM_THREADS", None)


def summarize(rows: list[dict], atol: float, rtol: float) -> dict:
    """Verdict counts, verdicts per problem, the false passes (the check passed at atol/rtol, the verdict says the
    candidate is wrong), the atol each problem's explained pairs need, and how many expected labels matched."""
    by_problem: dict[str, Counter] = {}
    needed: dict[str, float] = {}
    for row in rows:
        by_problem.setdefault(row["problem"], Counter())[row["verdict"]] += 1
        if row.get("explained") and row.get("needed_atol") is not None:
            needed[row["problem"]] = max(needed.get(row["problem"], 0.0), float(row["needed_atol"]))
    labelled = [row for row in rows if row.get("expected")]
    return {
        "pairs": len(rows),
        "verdicts": dict(Counter(row["verdict"] for row in rows)),
        "by_problem": {problem: dict(counts) for problem, counts in by_problem.items()},
        "false_passes": [
            row["pair_id"] for row in rows if row.get("check_passed") and row["verdict"] in FALSE_PASS_VERDICTS
        ],
        "needed_atol_by_problem": needed,
        "tolerance_used": {"atol": atol, "rtol": rtol},
        "expected_matched": [sum(row["expected"] == row["verdict"] for row in labelled), len(labelled)],
    }
