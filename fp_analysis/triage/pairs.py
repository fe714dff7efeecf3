"""``fpa triage``: KernelBench's check and ``fpa explain`` on many problem/solution pairs, in parallel, resumable.

Pairs come from a folder laid out as KernelBench runs are, or from a CSV/JSON manifest (``discovery``). Each pair
is explained by ``fp_analysis.explain.jobs.explain_files`` (``rows``) — its own worker and candidate processes,
each call into the user's code under the timeout — so one pair's crash, hang, exit or segfault is that pair's
row, never the end of the run. Jobs run on the local pool or a Ray cluster (``pool``, ``ray``); each finished pair
is appended to the results store at once, as a run of its own (``command="triage"``), so a triage killed midway
loses only the pairs under way: the next one reuses every stored pair whose files (by SHA-256), check options,
device and fp_analysis version are the same (``keys``).

The process that supervises the jobs imports torch once per triage: to record torch's versions with the stored
rows, and on a GPU triage to count the GPUs and read their architectures (which initialises CUDA here: harmless,
the jobs' processes come from a fork server that never does).
"""

from __future__ import annotations

import contextlib
import datetime
import os
import time
from collections import Counter
from collections.abc import Callable

from ..errors import Fate, ParameterError
from ..explain.jobs import refuse_stale_edits
from ..options import ExplainOptions
from ..records import safe_text
from ..run.interrupts import terminate_as_interrupt
from .discovery import Pair
from .keys import analysis_key, pair_key, require_writable, snapshots, stored_rows, tool_version
from .pool import Placement, Pool, local_rows, placed, threads_per_job
from .rows import identity
from .summary import summarize, timing

__all__ = ["triage"]


def triage(
    pairs: list[Pair],
    options: ExplainOptions,
    pool: Pool | None = None,
    *,
    rerun: bool = False,
    store: bool = True,
    store_dir: str | os.PathLike | None = None,
    on_progress: Callable[[dict], None] | None = None,
) -> dict:
    """Explain every pair under ``options`` (see the module docstring), on ``pool`` (None: ``Pool()``, the local
    pool at its default size); returns {"pairs": rows in ``pairs`` order, "summary": …, "ran": n, "reused": n,
    "rejudged": n (of the reused, those stored at another atol and judged again at this one),
    "not_stored": [why], "unreadable": [store files skipped], "timing": …, "settings": …}. ``rerun``: explain the
    stored pairs again too; ``store``: store the rows (in ``store_dir``, else the results store); ``on_progress``
    gets {"done", "total", "verdicts", "pair"} after each pair.

    ``options.device`` is resolved before any pair runs, on this machine or against the Ray cluster's resources.
    ``timing``: wall seconds, pairs per hour, seconds spent building ahead and explaining, and the share of the
    slots' time no job held them (``slot_idle_share``). ``settings``: the options the pairs ran under (the device
    resolved), fp_analysis's ``version`` and when the triage ``started`` (local time, ISO 8601, to the second).
    """
    if not pairs:
        raise ParameterError("Got no pairs to triage.")
    pool = Pool() if pool is None else pool
    if not isinstance(options, ExplainOptions) or not isinstance(pool, Pool):
        raise ParameterError(f"Got options={options!r}, pool={pool!r}, but they must be an ExplainOptions and a Pool.")
    if store:
        require_writable(store_dir)
    with placed(pool, options) as (resolved, placement):
        return _triage(pairs, resolved, placement, rerun=rerun, store=store, store_dir=store_dir,
                       on_progress=on_progress)  # fmt: skip


def _triage(
    pairs: list[Pair],
    options: ExplainOptions,
    placement: Placement,
    *,
    rerun: bool,
    store: bool,
    store_dir: str | os.PathLike | None,
    on_progress: Callable[[dict], None] | None,
) -> dict:
    """``triage`` once its device is resolved (in ``options``) and where its jobs run is known (``placement``)."""
    began = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    given = snapshots(pairs)
    refuse_stale_edits({id(s): s for g in given.values() for s in (g.problem, g.solution)}.values())
    keys = {pair.id: (pair_key(given[pair.id], options), analysis_key(given[pair.id], options)) for pair in pairs}
    unreadable: list[str] = []
    done, rejudged = {}, set()
    if store and not rerun:
        done, rejudged = stored_rows(pairs, keys, store_dir, unreadable, options.atol)
    reused = len(done)
    verdicts = Counter(row["verdict"] for row in done.values())
    not_stored = []
    if store:  # before any pair runs: nothing of fpa's is imported after the user's code could have written it
        from ..store import append_run, run_metadata

        metadata = run_metadata("triage", options.to_json(), options.seed, options.device)
    todo = [pair for pair in pairs if pair.id not in done]
    started = time.perf_counter()
    with (
        contextlib.ExitStack() as stack,
        threads_per_job(placement.workers),
        terminate_as_interrupt(),
    ):
        if placement.cluster is not None:
            from .ray import as_finished

            finishing = as_finished(placement.cluster, todo, options, tool_version(), given, placement.build_cache)
        else:
            finishing = local_rows(placement, todo, options, given)
        stack.enter_context(contextlib.closing(finishing))  # on Ctrl-C, Ray's pending tasks cancelled first
        for pair, result in finishing:
            row = {**identity(pair, *keys[pair.id]), **result}
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
    return {"pairs": ordered, "summary": summarize(ordered, options.atol, options.rtol), "ran": len(todo),
            "reused": reused, "rejudged": len(rejudged), "not_stored": not_stored, "unreadable": unreadable,
            "timing": timing(ran_rows, wall, placement, options.device),
            "settings": {**options.to_json(), "version": tool_version(), "started": began}}  # fmt: skip
