"""What the command line calls to run a job on the user's files: options checked here, the work in a worker.

``explain_files``, ``fuzz_files`` and ``replay_files`` check every option before anything starts (a bad
one is a ``ParameterError``, exit 2), then run the job apart from this process (``fp_analysis.run.worker``:
the problem and the analysis in a worker, the solution in a process of its own), each call into the
user's code limited to ``timeout`` seconds. They raise ``UserCodeError`` when the user's code fails and
``FpaError`` for a usage error the job finds. This module imports no torch: the process that only
supervises starts fast.

Every job runs on a snapshot of the files it is given (``fp_analysis.run.snapshot.Given``, read here before the job
starts, or by the triage before any pair runs): the worker imports the problem from it, and a job whose files
changed while it ran — or before it began — is ``UserCodeError`` with ``Fate.MODIFIED_FILES`` whatever else it
gave, since a solution may not edit the files it is judged against.
"""

from __future__ import annotations

import json
import math
import os

from ..errors import Fate, FpaError, ParameterError, Side, UserCodeError
from ..model.verdict import Explanation
from ..numerics.memory import require
from ..options import (
    DEFAULT_TIMEOUT_S,
    ExplainOptions,
    check_count,
    check_device,
    check_file,
    check_seconds,
    check_seed,
)
from ..records import safe_text
from ..run.snapshot import Given, Journal
from ..run.supervisor import JobResult, run_job

__all__ = [
    "default_max_examples",
    "explain_files",
    "fuzz_files",
    "parse_replay",
    "prepare_file",
    "refuse_stale_edits",
    "replay_files",
]


def explain_files(
    problem,
    solution,
    options: ExplainOptions | None = None,
    *,
    on_event=None,
    env: dict[str, str] | None = None,
    given: Given | None = None,
) -> Explanation:
    """The explanation of KernelBench's check on the two files (``fp_analysis.explain.job``) under ``options``
    (``ExplainOptions()``: KernelBench's own check); ``worker`` holds the time spent and what each side's process
    printed. ``env``: variables for the job's processes only; ``given``: the pair's snapshot, where it was taken
    already (see the module docstring)."""
    options = ExplainOptions() if options is None else options
    if not isinstance(options, ExplainOptions):
        raise ParameterError(f"Got options={options!r}, but options must be an ExplainOptions (or None).")
    job = {**_pair(problem, solution), "options": options.to_json()}
    result = _run_given(given, "explain", job, timeout=options.timeout, on_event=on_event, env=env)
    return Explanation.from_dict({**result.value, "worker": result.worker_record()})


def prepare_file(
    solution, *, timeout: float = DEFAULT_TIMEOUT_S, env: dict[str, str] | None = None, given: Given | None = None
) -> dict:
    """Import the solution file in a candidate process of its own and nothing more: what its import builds
    (``load_inline`` extensions, into ``env``'s ``TORCH_EXTENSIONS_DIR``) is then built for the job that uses it.
    Returns {"notes", "extensions" (its load_inline calls by how fpa's store answered them:
    ``run.extension_store.ANSWERS``), "seconds" (the job's wall time), "import_seconds"}; raises as
    ``explain_files`` (``given``: the pair's snapshot, checked as the job's is)."""
    options = {"solution": check_file("solution", solution)}
    result = _run_given(given, "prepare", options, timeout=check_seconds("timeout", timeout), env=env)
    return {**result.value, "seconds": result.seconds, "import_seconds": result.user_seconds}


def default_max_examples() -> int:
    """200 examples, or 2000 under ``HYPOTHESIS_PROFILE=thorough`` (as the test suite's profiles)."""
    return 2000 if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else 200


def fuzz_files(
    problem,
    solution,
    *,
    max_examples: int | None = None,
    device: str = "auto",
    seed: int = 0,
    timeout: float = DEFAULT_TIMEOUT_S,
    on_event=None,
) -> dict:
    """The failures found by fuzzing a user's KernelBench pair (``fp_analysis.fuzz.search``).

    Returns {"failures": [FuzzFailure as dict], "examples": n, "shrink_steps": k, "refused": r, "too_large": t,
    "refusals": [{"reason", "count"}], "verdicts": {verdict: count}, "drawn": [argument names], "max_examples": m,
    "notes": [inputs a side wrote into], "worker": {...}}: ``examples`` counts the examples run until the first
    failure (or all of them), ``shrink_steps`` the runs Hypothesis made after it to shrink it, ``refused`` the
    drawn configurations the problem's own Model raised on (not examples; ``refusals`` the most frequent reasons),
    ``too_large`` those over fpa fuzz's size cap, ``verdicts`` how the examples before any failure were judged.
    Fewer than half the examples asked for (and no failure) is an FpaError naming why. ``max_examples`` defaults to
    ``default_max_examples()``.
    """
    pair = _pair(problem, solution)
    max_examples = default_max_examples() if max_examples is None else check_count("max_examples", max_examples)
    device = check_device(device).value
    search = {"max_examples": max_examples, "seed": check_seed("seed", seed)}  # fp_analysis.fuzz.search.Search
    options = {**pair, "search": search, "device": device}
    result = _run_given(None, "fuzz", options, timeout=check_seconds("timeout", timeout), on_event=on_event)
    return {**result.value, "worker": result.worker_record()}


def replay_files(
    problem, solution, replay: str, *, device: str = "auto", timeout: float = DEFAULT_TIMEOUT_S, on_event=None
) -> dict:
    """The result of one example given as the JSON of a failure's ``command`` (``--replay``), as ``fuzz_files``."""
    parse_replay(replay)
    options = {**_pair(problem, solution), "replay": replay, "device": check_device(device).value}
    result = _run_given(None, "replay", options, timeout=check_seconds("timeout", timeout), on_event=on_event)
    return {**result.value, "worker": result.worker_record()}


def _pair(problem, solution) -> dict:
    return {"problem": check_file("problem", problem), "solution": check_file("solution", solution)}


def _run_given(given: Given | None, job: str, options: dict, **run) -> JobResult:
    """``run_job`` on the snapshot of the job's files (``given``, or one taken now): both sides import from it, the
    files are checked unchanged before the job and after it, however it ended, and a journal of them stays on disk
    while it runs (see the module docstring)."""
    if given is None:
        given = Given.take(options.get("problem", options["solution"]), options["solution"])
        refuse_stale_edits([given.problem, given.solution])
    _given_before(given)
    sources = {"solution_sources": given.solution.encoded()}
    if "problem" in options:
        sources["problem_sources"] = given.problem.encoded()
    with Journal(given):
        try:
            result = run_job(job, {**options, **sources}, **run)
        except FpaError as error:
            _given_after(given, getattr(error, "details", {}).get("worker"))
            raise
        except BaseException:  # interrupted: what the user's code changed is put back before the command ends
            given.restore()
            raise
        _given_after(given, result.worker_record())
    return result


def refuse_stale_edits(snapshots) -> None:
    """ParameterError naming the files of ``snapshots`` that changed while an earlier job given them ran, which was
    ended before it could check them (``snapshot.Journal``)."""
    stale = Journal.stale_edits(snapshots)
    if stale:
        named = "; ".join(map(safe_text, stale))
        raise ParameterError(
            "these files changed while an earlier fpa job that was given them ran, and that job was ended before it "
            f"could check them (by SIGKILL, say), so they may hold a solution's edit: {named}. Put the copy back, or, "
            "if the change is yours, delete the record; then run again."
        )


def _given_before(given: Given) -> None:
    """Before a job: the pair is not judged (UserCodeError, ``Fate.MODIFIED_FILES``) when its files changed after they
    were read (another job's code edited them, or another program); they are put back for the pairs after it."""
    _unchanged(given, "the pair's files changed after fpa read them and before its job began ({names}): the code of "
               "another job, or another program, edited them; this pair was not judged")  # fmt: skip


def _given_after(given: Given, worker: dict | None) -> None:
    """After a job, however it ended: UserCodeError (``Fate.MODIFIED_FILES``) when its files changed while it ran;
    they are put back as they were read."""
    _unchanged(given, "files the job was given changed while it ran ({names}), by the solution's code (or, where "
               "jobs ran side by side, another's): a solution may not edit the files it is judged against (the job "
               "imported them from the copy read before it began)", worker)  # fmt: skip


def _unchanged(given: Given, message: str, worker: dict | None = None) -> None:
    """Raise ``message`` (``{names}`` filled in) when a file ``given`` holds has changed since it was read, having put
    the files back (``Given.restore``) so that the pairs after this one are judged as they were given."""
    changed = given.changed()
    if not changed:
        return
    names = ", ".join(safe_text(name) for name in changed[:4])
    names += f" and {len(changed) - 4} more" if changed[4:] else ""
    restored, failed = given.restore()
    message = message.format(names=names)
    message += "; fpa put them back as they were" if restored and not failed else ""
    message += f"; fpa could not put back {'; '.join(safe_text(f) for f in failed)}" if failed else ""
    details = {"files": [safe_text(name) for name in changed]} | ({"worker": worker} if worker else {})
    raise UserCodeError(message, side=Side.SOLUTION, where="the job", fate=Fate.MODIFIED_FILES, details=details)


def parse_replay(replay: str) -> tuple[dict, dict]:
    """The config and data of a ``--replay`` JSON, checked; ParameterError naming what is wrong otherwise."""
    usage = (
        "--replay must be the JSON of a failure's command: "
        '{"config": {..., "input_shapes": [[...], ...]}, "data": {...}}'
    )
    try:
        payload = json.loads(replay)
    except json.JSONDecodeError as error:
        raise ParameterError(f"{usage}; it is not JSON ({error})") from None
    if (
        not isinstance(payload, dict)
        or not isinstance(payload.get("config"), dict)
        or not isinstance(payload.get("data"), dict)
    ):
        raise ParameterError(f"{usage}; got {replay[:200]!r}")
    config, data = payload["config"], payload["data"]
    shapes = config.get("input_shapes")

    def is_shape(shape) -> bool:
        return isinstance(shape, list) and all(_positive_int(n) for n in shape)  # [] is a 0-d tensor

    if not (isinstance(shapes, list) and shapes and all(s is None or is_shape(s) for s in shapes)):
        raise ParameterError(
            f"{usage}; config.input_shapes must be a list with a list of positive ints (or null) per input, "
            f"got {shapes!r}"
        )
    from ..strategies import DATA_KINDS, LAYOUTS  # torch and Hypothesis: only when a replay is asked for

    problems = []
    if data.get("kind") not in DATA_KINDS:
        problems.append(f"data.kind must be one of {', '.join(DATA_KINDS)} (got {data.get('kind')!r})")
    if data.get("layout") not in LAYOUTS:
        problems.append(f"data.layout must be one of {', '.join(LAYOUTS)} (got {data.get('layout')!r})")
    if isinstance(data.get("seed"), bool) or not isinstance(data.get("seed"), int) or data["seed"] < 0:
        problems.append(f"data.seed must be an int >= 0 (got {data.get('seed')!r})")
    if problems:
        raise ParameterError(f"{usage}; " + "; ".join(problems))
    elements = sum(math.prod(s) for s in shapes if s is not None)
    require({"fp32 inputs": 4 * elements}, f"--replay with input_shapes {shapes}")
    return config, data


def _positive_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
