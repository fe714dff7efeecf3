"""``fpa triage``: KernelBench's check and ``fpa explain`` on many problem/solution pairs, in parallel, resumable.

Pairs come from a folder laid out as KernelBench runs are (``discover``) or from a CSV/JSON manifest. Each pair
is explained by ``fp_analysis.explain.jobs.explain_files`` — its own worker and candidate processes, each call into the
user's code under the timeout — so one pair's crash, hang, exit or segfault is that pair's row, never the end of
the run. Jobs run ``workers`` at a time; each finished pair is appended to the results store at once, as a run
of its own (``command="triage"``), so a triage killed midway loses only the pairs under way: the next one reuses
every stored pair whose files (by SHA-256), check options, device and fp_analysis version are the same.

The process that supervises the jobs imports torch once per triage: to record torch's versions with the stored
rows, and on a GPU triage to count the GPUs and read their architectures (which initialises CUDA here: harmless,
the jobs' processes come from a fork server that never does).
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
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

from ..errors import ExitCode, Fate, FpaError, InternalError, OutOfScopeError, ParameterError, UserCodeError
from ..explain.jobs import explain_files, prepare_file, refuse_stale_edits
from ..options import (
    TRIALS_MAX,
    check_count,
    check_device,
    check_reference_mode,
    check_seconds,
    check_seed,
    check_tolerance,
)
from ..records import safe_text
from ..run.interrupts import terminate_as_interrupt
from ..run.snapshot import PROBLEM_FILE, Given, Snapshot

__all__ = ["FALSE_PASS_VERDICTS", "Pair", "discover", "internal_error_row", "matches_expected", "summarize", "triage"]

# Verdicts that mean the candidate is wrong: a pair with one of them whose KernelBench check passed is a false pass.
FALSE_PASS_VERDICTS = ("bug", "parameter_mismatch", "nonfinite")
# The rows of pairs that did not get a verdict from the engine: the user's code failed (exit 3), the Model is beyond
# what the engine models (exit 2, naming what), the files are not a KernelBench pair (exit 2: no ModelNew, say),
# a failure of ours (exit 4).
USER_CODE_FAILED, OUT_OF_SCOPE, USAGE_ERROR, INTERNAL_ERROR = (
    "user_code_failed",
    "out_of_scope",
    "usage_error",
    "internal_error",
)
_NOT_SOLUTIONS = ("setup.py", "conftest.py")


@dataclasses.dataclass(frozen=True)
class Pair:
    """One problem file and one solution file to explain; ``expected`` an optional label to compare: a verdict, or
    several any of which is right, separated by ``|`` (``identical|accumulation_order``)."""

    id: str
    problem: pathlib.Path
    solution: pathlib.Path
    expected: str | None = None


def discover(path: str | os.PathLike) -> list[Pair]:
    """The pairs under ``path``: a folder, or a manifest (.csv or .json).

    Folder: every folder below ``path`` holding a ``problem.py`` is a problem; its solutions are the other .py
    files in it and every .py file in the folders below it (KernelBench runs keep one sample per folder), except
    names starting with ``_`` (helper modules) or ``.``, ``setup.py``, what hidden folders hold, and anything that
    is not a regular file. A ``problem.py`` below another problem's folder is refused (ParameterError): it would be
    a sample's own reference. A pair's id is its solution's path relative to ``path``, without ``.py``.
    Manifest: rows (a CSV with a header, or a JSON list of objects) with ``problem`` and ``solution``,
    optional ``id`` and ``expected``; relative paths are relative to the manifest's folder.
    """
    root = pathlib.Path(path)
    if root.is_file():
        return _from_manifest(root)
    if not root.is_dir():
        raise ParameterError(f"Got PATH={str(path)!r}, which is neither a folder nor a manifest file (.csv, .json).")
    pairs = []
    problems = [p for p in sorted(root.rglob(PROBLEM_FILE)) if p.is_file()]  # not a folder or dangling link so named
    for problem in problems:
        # a sample cannot bring its own reference: a problem.py among another problem's samples would be the one its
        # neighbours are judged against
        outer = next((p for p in problems if p != problem and p.parent in problem.parents), None)
        if outer is not None:
            raise ParameterError(
                f"Got PATH={safe_text(str(path))!r}, but {safe_text(str(problem))!r} lies among the samples of "
                f"{safe_text(str(outer))!r}: a sample cannot bring its own reference. Move the problem to a folder of "
                "its own, or remove the file from the sample."
            )
    for problem in problems:
        folder = problem.parent
        for solution in sorted(folder.rglob("*.py")):
            parts = solution.relative_to(folder).parts
            if (
                solution == problem
                or not solution.is_file()  # a folder named x.py, a FIFO, a dangling link
                or any(part.startswith((".", "_")) for part in parts)  # helpers, .ipynb_checkpoints
                or solution.name in _NOT_SOLUTIONS
            ):
                continue
            pairs.append(Pair(str(solution.relative_to(root).with_suffix("")), problem, solution))
    if not pairs:
        raise ParameterError(f"Got PATH={str(path)!r}, but no folder below it holds a {PROBLEM_FILE} and a solution.")
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
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, csv.Error, RecursionError) as error:
        reason = "it is nested too deep" if isinstance(error, RecursionError) else error
        raise ParameterError(f"Got manifest {str(path)!r}, which cannot be read: {reason}") from None
    if not isinstance(rows, list) or not rows:
        raise ParameterError(f"Got manifest {str(path)!r}, but it lists no pairs (rows of problem, solution).")
    pairs = []
    for number, row in enumerate(rows, 1):
        if not isinstance(row, dict) or not row.get("problem") or not row.get("solution"):
            raise ParameterError(f"Manifest {str(path)!r}, row {number}: give problem and solution, got {row!r}.")
        problem, solution = (path.parent / str(row[k]) for k in ("problem", "solution"))
        for key, file in (("problem", problem), ("solution", solution)):
            if not file.is_file():
                what = "does not exist" if not file.exists() else "is not a regular file"
                raise ParameterError(f"Manifest {str(path)!r}, row {number}: {key} {str(file)!r} {what}.")
        given = row.get("id")
        pair_id = str(given) if given not in (None, "") else _default_id(solution, path.parent)
        expected = row.get("expected")
        if isinstance(expected, list):  # JSON: several right verdicts
            expected = "|".join(map(str, expected))
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


def solution_folders(pairs: list[Pair]) -> frozenset:
    """The folders holding the pairs' solutions: not helpers of a problem whose folder holds them."""
    return frozenset(pair.solution.resolve().parent for pair in pairs)


def tool_version() -> str:
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


def _key(given: Given, options: dict) -> str:
    """What makes a stored row this pair's: both files' contents and the source files each may read
    (``sources_of``; conservative: where solutions lie beside their problem, editing one runs that folder's pairs
    again), the check's options (the timeout and the resolved device among them), the tool's version."""
    problem, solution = given.problem, given.solution
    parts = [problem.digest(problem.name), solution.digest(solution.name), json.dumps(options, sort_keys=True),
             tool_version()]  # fmt: skip
    parts += [
        f"{relative}:{snapshot.digest(relative)}" for snapshot in (problem, solution) for relative in snapshot.sources
    ]
    # surrogateescape: a file name's undecodable bytes are hashed as the bytes they are
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def explain_row(
    pair: Pair, options: dict, timeout: float, env: dict[str, str], built: dict | None, given: Given | None = None
) -> dict:
    """The pair's row (a local slot's or a Ray task's work): its verdict and numbers, or how its job ended without
    one. ``built``: what building the solution ahead gave (``_build_ahead``), None where it was not built ahead.
    A solution whose import raised there (a compile error, say) has that as its row: the job would import the
    same file the same way. Any other failure of the build (a timeout under parallel builds, a kill by the OOM
    killer, a usage error) is left to the job, which meets it again or not, the problem's errors first as on a
    CPU. ``given``: the pair's snapshot (``snapshots``); a job whose files changed is that pair's failure
    (``Fate.MODIFIED_FILES``, which the triage does not store)."""
    start = time.perf_counter()
    row = {**_blank_row(), "build_seconds": None if built is None else built["seconds"]}
    try:
        if built is not None and getattr(built.get("error"), "fate", None) in (Fate.RAISED, Fate.MODIFIED_FILES):
            raise built["error"]
        explanation = explain_files(pair.problem, pair.solution, timeout=timeout, env=env, given=given, **options)
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
            notes=" | ".join(explanation.notes) or None,
        )
    except UserCodeError as error:
        row.update(verdict=USER_CODE_FAILED, exit_code=int(error.exit_code), error=str(error).splitlines()[0],
                   fate=error.fate.value)  # fmt: skip
    except OutOfScopeError as error:
        row.update(verdict=OUT_OF_SCOPE, exit_code=int(error.exit_code), error=str(error).splitlines()[0])
    except InternalError as error:
        row.update(verdict=INTERNAL_ERROR, exit_code=int(error.exit_code), error=str(error).splitlines()[0])
    except FpaError as error:
        row.update(verdict=USAGE_ERROR, exit_code=int(error.exit_code), error=str(error).splitlines()[0])
    except Exception as error:  # one pair's internal failure is its row, never the end of the run
        row.update(verdict=INTERNAL_ERROR, exit_code=int(ExitCode.INTERNAL), error=f"{type(error).__name__}: {error}")
    row["seconds"] = time.perf_counter() - start
    return row


def _blank_row() -> dict:
    """Every field of a pair's row, unset: a row has them all, however its job ended (they are the store's columns)."""
    return {"verdict": None, "explained": None, "exit_code": None, "check_passed": None, "max_abs": None,
            "candidate_vs_fp64": None, "reference_vs_fp64": None, "needed_atol": None, "error": None, "fate": None,
            "notes": None, "build_seconds": None, "seconds": 0.0}  # fmt: skip


def internal_error_row(message: str) -> dict:
    """The row of a pair whose job failed on our side (not the user's code's): ``internal_error``, exit 4."""
    return {**_blank_row(), "verdict": INTERNAL_ERROR, "exit_code": int(ExitCode.INTERNAL), "error": message}


def _needs_build(solution: pathlib.Path) -> bool:
    """Whether the solution's import may build a torch extension (``load_inline``, ``load``, ``cpp_extension``):
    such pairs are built ahead on the CPU cores. A plain-PyTorch solution is not imported twice."""
    try:
        text = solution.read_text(errors="replace")
    except OSError:
        return False
    return "load_inline" in text or "cpp_extension" in text


def _build_ahead(pair: Pair, timeout: float, env: dict[str, str], given: Given | None = None) -> dict:
    """Import the pair's solution alone (``jobs.prepare_file``), so that its extensions are built into the pair's
    extensions folder before a GPU's worker takes it; {"seconds", "error": the UserCodeError or FpaError or None}."""
    start = time.perf_counter()
    error = None
    try:
        prepare_file(pair.solution, timeout=timeout, env=env, given=given)
    except InternalError:
        pass  # ours, not the solution's: the explain job meets it again and its row says so
    except FpaError as failure:
        error = failure
    return {"seconds": time.perf_counter() - start, "error": error}


def _identity(pair: Pair, key: str) -> dict:
    """The fields of a row that say which pair it is: always the current pair's (a stored result may have been
    another pair's with the same contents, or this pair's under another id, folder or label)."""
    return {"pair_id": safe_text(pair.id), "problem": safe_text(str(pair.problem)),
            "solution": safe_text(str(pair.solution)), "expected": pair.expected, "pair_key": key}  # fmt: skip


def _stored(directory, keys: set[str], unreadable: list[str]) -> dict[str, dict]:
    """The newest stored triage row of each pair key in ``keys`` (internal errors left out: they are run again).
    Store files that cannot be read are skipped and named in ``unreadable`` (for the user, not as raw warnings)."""
    import warnings

    from ..store import read_store

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = read_store(directory, command="triage")
    unreadable += [str(w.message) for w in caught]
    if table.num_rows == 0 or "pair_key" not in table.column_names:
        return {}
    found = {}
    for row in table.to_pylist():  # time order: a later row replaces an earlier one
        # an internal error says nothing of the pair (a node that died, a full disk): run it again
        if row.get("pair_key") in keys and row.get("verdict") != INTERNAL_ERROR:
            found[row["pair_key"]] = {k: v for k, v in row.items() if not k.startswith("meta_")}
    return found


def triage(
    pairs: list[Pair],
    *,
    device: str = "cpu",
    workers: int | None = None,
    builders: int | None = None,
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
    ray: str | None = None,
) -> dict:
    """Explain every pair (see the module docstring); returns {"pairs": rows in ``pairs`` order, "summary": …,
    "ran": n, "reused": n, "timing": …}. ``on_progress`` gets {"done", "total", "verdicts", "pair"} after each
    pair.

    On a GPU host each job slot is pinned to one GPU (``CUDA_VISIBLE_DEVICES``; ``workers`` defaults to one slot
    per visible GPU), and the solutions that build extensions are imported ahead by ``builders`` jobs on the CPU
    cores (default half the cores, at most 8), each pair with its own ``TORCH_EXTENSIONS_DIR``, so that a GPU's
    job finds the extension built. ``timing``: wall seconds, pairs per hour, seconds spent building ahead and
    explaining, and the share of the slots' time no job held them (``slot_idle_share``).

    ``ray``: run each pair as a task on the Ray cluster at that address instead (``fp_analysis.triage.ray``);
    the device is then resolved against the cluster's resources.
    """
    if not pairs:
        raise ParameterError("Got no pairs to triage.")
    if ray is not None and (workers is not None or builders is not None):
        raise ParameterError("--workers and --builders size the local pool: with --ray the cluster's resources decide.")
    timeout = check_seconds("timeout", timeout)
    options = {
        "device": check_device(device).value,
        "trials": check_count("trials", trials, maximum=TRIALS_MAX),
        "seed": check_seed("seed", seed),
        "atol": check_tolerance("atol", atol),
        "rtol": check_tolerance("rtol", rtol),
        "reference_mode": None if reference_mode is None else check_reference_mode(reference_mode),
    }  # checked here, so that a bad option is one usage error and not every pair's
    if store:
        _require_writable(store_dir)
    with contextlib.ExitStack() as stack:
        if ray is not None:
            from . import ray as triage_ray

            cluster = stack.enter_context(triage_ray.cluster(ray))
            device = options["device"] = triage_ray.cluster_device(cluster, options["device"])
            workers, builders, slots = triage_ray.cluster_slots(cluster, device), 0, [{}]
        else:
            device = options["device"] = _resolved_device(options["device"])
            slots = _slot_environments(device)
            workers = check_count("workers", workers if workers is not None else _default_workers(device, len(slots)))
            builders = check_count("builders", builders if builders is not None else _default_builders(device))
        return _triage(pairs, options, timeout, workers, builders, slots, rerun, store, store_dir, on_progress,
                       cluster if ray is not None else None)  # fmt: skip


def _triage(pairs, options, timeout, workers, builders, slots, rerun, store, store_dir, on_progress, cluster) -> dict:
    """``triage`` once its options are checked and its device, slots and (Ray) cluster are known."""
    device, seed, atol, rtol = options["device"], options["seed"], options["atol"], options["rtol"]
    given = snapshots(pairs)
    refuse_stale_edits({id(s): s for g in given.values() for s in (g.problem, g.solution)}.values())
    keys = {pair.id: _key(given[pair.id], {**options, "timeout": timeout}) for pair in pairs}
    unreadable: list[str] = []
    rows = {} if rerun or not store else _stored(store_dir, set(keys.values()), unreadable)
    done = {
        pair.id: {**rows[keys[pair.id]], **_identity(pair, keys[pair.id])} for pair in pairs if keys[pair.id] in rows
    }
    reused = len(done)
    verdicts = Counter(row["verdict"] for row in done.values())
    not_stored = []
    if store:  # before any pair runs: nothing of fpa's is imported after the user's code could have written it
        from ..store import append_run, run_metadata

        metadata = run_metadata("triage", options, seed, device)
    todo = [pair for pair in pairs if pair.id not in done]
    started = time.perf_counter()
    with (
        contextlib.ExitStack() as stack,
        # jobs in daemon threads may still write there when Ctrl-C ends the run: no cleanup error in its place
        tempfile.TemporaryDirectory(prefix="fpa-triage-extensions-", ignore_cleanup_errors=True) as extensions,
        _threads_per_job(workers),
        terminate_as_interrupt(),
    ):

        def environment(pair: Pair, slot: int | None) -> dict[str, str]:
            # each pair's extensions apart: two solutions may name their extension alike, and a builder and a GPU
            # job must find the same folder
            env = {"TORCH_EXTENSIONS_DIR": str(pathlib.Path(extensions) / keys[pair.id])}
            if slot is None:  # a builder: a GPU of its own too (a solution's import may use one), spread by pair
                slot = int(keys[pair.id][:8], 16)
            return {**env, **slots[slot % len(slots)]}

        def build(pair: Pair) -> dict:
            return _build_ahead(pair, timeout, environment(pair, None), given[pair.id])

        def run(pair: Pair, built: dict | None, slot: int) -> dict:
            return explain_row(pair, options, timeout, environment(pair, slot), built, given[pair.id])

        if cluster is not None:
            from .ray import as_finished

            finishing = as_finished(cluster, todo, options, timeout, tool_version(), given)
        else:
            finishing = _as_finished(todo, workers, run, build if device == "cuda" else None, builders)
        stack.enter_context(contextlib.closing(finishing))  # on Ctrl-C, Ray's pending tasks cancelled first
        for pair, result in finishing:
            row = {**_identity(pair, keys[pair.id]), **result}
            if row.get("fate") == Fate.MODIFIED_FILES.value:  # judged against files that changed: never reused
                not_stored.append(f"{row['pair_id']}: its files changed while it ran")
            elif store:
                try:
                    append_run([row], {**metadata, "run_id": f"{metadata['run_id'][:16]}-{len(done)}"},
                               directory=store_dir)  # fmt: skip
                except Exception as error:  # a full disk, a value Parquet refuses: the resume pays, never the run
                    not_stored.append(safe_text(f"{row['pair_id']}: {type(error).__name__}: {error}"))
            done[pair.id] = row
            verdicts[row["verdict"]] += 1
            if on_progress:
                on_progress({"done": len(done), "total": len(pairs), "verdicts": dict(verdicts), "pair": pair.id})
    wall = time.perf_counter() - started
    ordered = [done[pair.id] for pair in pairs]
    ran_rows = [done[pair.id] for pair in todo]
    return {"pairs": ordered, "summary": summarize(ordered, atol, rtol), "ran": len(todo), "reused": reused,
            "not_stored": not_stored, "unreadable": unreadable,
            "timing": _timing(ran_rows, wall, workers, builders, device)}  # fmt: skip


def _timing(rows: list[dict], wall: float, workers: int, builders: int, device: str) -> dict:
    """How the run spent its time: the pairs run per hour of wall time, the seconds of building ahead and of
    explaining (summed over jobs), and the share of the slots' wall time no explain job held them."""
    explaining = sum(row["seconds"] for row in rows)
    building = sum(row["build_seconds"] or 0.0 for row in rows)
    return {
        "device": device,
        "wall_s": wall,
        "pairs": len(rows),
        "pairs_per_hour": 3600.0 * len(rows) / wall if rows and wall > 0 else None,
        "slots": workers,
        "builders": builders if device == "cuda" else 0,
        "built_ahead": sum(row["build_seconds"] is not None for row in rows),
        "build_s": building,
        "explain_s": explaining,
        "slot_idle_share": max(0.0, 1.0 - explaining / (wall * workers)) if rows and wall > 0 else None,
    }


def _require_writable(directory) -> None:
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


def _as_finished(
    todo: list[Pair],
    workers: int,
    run: Callable[[Pair, dict | None, int], dict],
    build: Callable[[Pair], dict] | None = None,
    builders: int = 0,
):
    """(pair, ``run(pair, built, slot)``) for each pair of ``todo`` as it finishes, ``workers`` at a time, each
    worker on its own ``slot`` (0 … workers-1: its GPU). With ``build``, ``builders`` threads first run
    ``build(pair)`` on the pairs whose solution builds an extension (``_needs_build``), in order, and such a pair
    is run once built (``built`` is what ``build`` gave; None for the others); the other pairs are run at once,
    so the slots work while the builders do.

    Daemon threads, not a ThreadPoolExecutor: an interrupted triage (Ctrl-C, SIGTERM) must end at once, not wait
    for the jobs under way (an executor's threads are joined at exit); the jobs' processes end with this one
    (each watches its parent, ``fp_analysis.run.worker``), and what was stored stays stored."""
    ready, finished, to_build = queue.SimpleQueue(), queue.SimpleQueue(), queue.SimpleQueue()
    lock, taken = threading.Lock(), [0]

    def start(target, count: int):
        for index in range(count):
            threading.Thread(target=target, args=(index,), name="fpa-triage", daemon=True).start()

    building = 0
    for pair in todo:
        if build is not None and _needs_build(pair.solution):
            to_build.put(pair)
            building += 1
        else:
            ready.put((pair, None))

    def builder(_index):
        while True:
            try:
                pair = to_build.get_nowait()
            except queue.Empty:
                return
            built = None  # a build that failed on our side: the job builds for itself
            try:
                built = build(pair)
            except Exception:
                pass
            finally:  # every pair reaches a worker, or the triage would wait for it for ever
                ready.put((pair, built))

    start(builder, min(builders, building))

    def worker(slot):
        while True:
            with lock:
                if taken[0] == len(todo):
                    return
                taken[0] += 1
            pair, built = ready.get()
            try:
                row = run(pair, built, slot)
            except Exception as error:  # ours (a full disk under the job's folder): that pair's row, not a hang
                row = internal_error_row(f"{type(error).__name__}: {error}")
            finished.put((pair, row))

    start(worker, min(workers, len(todo)))
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


def _slot_environments(device: str) -> list[dict[str, str]]:
    """The variables of each job slot: on a GPU host one slot per visible GPU, ``CUDA_VISIBLE_DEVICES`` naming it
    (the ids the user made visible, where they did), and ``TORCH_CUDA_ARCH_LIST`` set to the GPUs' architectures
    unless the user set it (so that a builder builds what the job will load whichever GPU it sees)."""
    if device == "cpu":
        return [{}]
    import torch

    count = torch.cuda.device_count()
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = [v.strip() for v in visible.split(",") if v.strip()][:count] if visible else [str(i) for i in range(count)]
    extra = {}
    if "TORCH_CUDA_ARCH_LIST" not in os.environ:
        archs = sorted({torch.cuda.get_device_capability(i) for i in range(count)})
        # with PTX, as torch's own default for the GPUs it sees
        extra["TORCH_CUDA_ARCH_LIST"] = ";".join(f"{major}.{minor}" for major, minor in archs) + "+PTX"
    return [{"CUDA_VISIBLE_DEVICES": gpu, **extra} for gpu in ids]


def _default_workers(device: str, gpus: int) -> int:
    """On a CPU a job per two cores (each job runs two processes); on a GPU host one job per GPU."""
    if device == "cpu":
        return max(1, (os.cpu_count() or 2) // 2)
    return max(1, gpus)


def _default_builders(device: str) -> int:
    """Jobs building extensions ahead on a GPU host: half the cores (nvcc is one process per build), at most 8."""
    return max(1, min(8, (os.cpu_count() or 2) // 2)) if device == "cuda" else 1


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


def matches_expected(row: dict) -> bool:
    """Whether a row's verdict is its expected label, or one of the ``|``-separated verdicts it names."""
    return row["verdict"] in str(row["expected"]).split("|")


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
        "expected_matched": [sum(matches_expected(row) for row in labelled), len(labelled)],
    }
