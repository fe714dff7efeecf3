"""``fpa triage``: explain many pairs at once, each in its own worker, and print or report their verdicts."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from .. import records
from ..options import DEFAULT_TIMEOUT_S, ExplainOptions
from ..run.interrupts import work_done
from .arguments import AsJson, CheckAtol, CheckRtol, CheckSeed, Device, NoStore, ReferenceMode, Timeout
from .console import err, out, shown
from .progress import PeriodicLine


def triage(
    path: Annotated[str, typer.Argument(help="a folder of problems (problem.py + solutions) or a .csv/.json manifest")],
    device: Device = "cpu",
    workers: Annotated[
        int | None, typer.Option(help="pairs explained at once (default: a CPU job per 2 cores; one per GPU)")
    ] = None,
    builders: Annotated[
        int | None,
        typer.Option(
            help="GPU only: solutions whose extensions are built ahead at once (default: the cores / 1.25, as memory "
            "allows)"
        ),
    ] = None,
    reference_mode: ReferenceMode = None,
    trials: Annotated[int, typer.Option(help="KernelBench trials per pair; 1 to 10000")] = 5,
    seed: CheckSeed = 42,
    atol: CheckAtol = 1e-4,
    rtol: CheckRtol = 1e-4,
    timeout: Timeout = DEFAULT_TIMEOUT_S,
    rerun: Annotated[bool, typer.Option("--rerun", help="explain every pair again, even those already stored")] = False,
    report: Annotated[
        str | None, typer.Option(help="also write a self-contained HTML report with figures to this .html file")
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(help="run the pairs as Ray tasks: auto, local, ray://HOST:PORT, HOST:PORT (the cluster extra)"),
    ] = None,
    build_cache: Annotated[
        str | None,
        typer.Option(
            help="build the solutions' extensions in this folder (an absolute path; with --ray, one every node "
            "mounts, so each solution builds once for all; default: fpa's cache on each machine)"
        ),
    ] = None,
    as_json: AsJson = False,
    no_store: NoStore = False,
) -> None:
    """Explain every pair of a KernelBench runs folder or a manifest: the check, the verdict, the false passes.
    Each pair runs apart (a crash or hang is only its own row); finished pairs are stored at once and not run
    again (same files, options, device, version) unless --rerun."""
    from ..triage.discovery import discover
    from ..triage.pairs import triage as triage_pairs
    from ..triage.pool import Pool

    pairs = discover(path)
    if report is not None:
        from ..triage.report import check_report_path

        check_report_path(report)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    # until the first pair ends, what the wait is for: Ray's start alone can take 20 s
    starting = f"starting Ray ({escape(ray)})" if ray else "starting the workers"
    periodic = PeriodicLine(enabled=not as_json and not err.is_terminal)  # a log or a pipe: a line now and then
    with Progress(*columns, console=err, disable=as_json, transient=True) as progress:
        task = progress.add_task(f"triage: {len(pairs)} pairs; {starting}…", total=len(pairs))

        def show(state: dict) -> None:
            counts = ", ".join(f"{v} {n}" for v, n in sorted(state["verdicts"].items(), key=lambda kv: -kv[1]))
            progress.update(task, completed=state["done"], description=f"triage: {escape(counts)}")
            periodic.say(f"fpa triage: {state['done']} of {state['total']} pairs done ({counts})")

        result = triage_pairs(
            pairs,
            ExplainOptions(device, reference_mode, trials, seed, atol, rtol, timeout=timeout),
            Pool(workers, builders, ray, build_cache),
            rerun=rerun,
            store=not no_store,
            on_progress=show,
        )
    work_done()  # the work is done: a signal now does not cut its output short
    for line in result["not_stored"]:
        err.print(f"[yellow]warning:[/] not stored (a rerun will explain it again): {shown(line)}")
    for line in result["unreadable"]:
        err.print(f"[yellow]warning:[/] a stored file was skipped: {shown(line)}")
    if as_json:
        print(records.dumps(result))
    else:
        _print_triage(result, path, atol, rtol)
    if report is not None:  # after the results are out: a report that fails costs only itself
        from ..triage.report import write_report

        try:
            written = write_report(result, report, title=f"fpa triage {records.safe_text(path)}")
            err.print(f"report: {shown(str(written))}", highlight=False)
        except Exception as error:  # e.g. the disk filled during the run
            err.print(f"[yellow]warning:[/] the report was not written: {shown(str(error))}")


def _print_triage(result: dict, path: str, atol: float, rtol: float) -> None:
    """The text output of ``fpa triage``: the pairs' table, their errors, the summary, the time spent."""
    from ..triage.summary import matches_expected

    summary = result["summary"]
    again = ""
    if result.get("rejudged"):  # reused across atols: their checks judged at this one
        again = f", {result['rejudged']} of them stored at another atol"
    table = Table(title=f"fpa triage {shown(path)}: {summary['pairs']} pairs ({result['ran']} run, {result['reused']} "
                  f"stored{again})")  # fmt: skip
    labelled = any(row.get("expected") for row in result["pairs"])
    columns = ("pair", "verdict", *(("expected",) if labelled else ()), "check", "max |diff|", "candidate vs fp64",
               "needed atol", "s")  # fmt: skip
    for col in columns:
        table.add_column(col, justify="left" if col in ("pair", "verdict", "expected") else "right")
    for row in result["pairs"]:
        check = "-" if row.get("check_passed") is None else ("pass" if row["check_passed"] else "fail")
        expected = []
        if labelled:
            mark = "" if not row.get("expected") or matches_expected(row) else " ✗"
            expected = [shown(row.get("expected") or "") + mark]
        table.add_row(
            shown(row["pair_id"]), shown(row["verdict"]), *expected, check, _num(row.get("max_abs")),
            _num(row.get("candidate_vs_fp64")), _num(row.get("needed_atol") if row.get("explained") else None),
            f"{row.get('seconds') or 0:.1f}",
        )  # fmt: skip
    out.print(table)
    for row in result["pairs"]:
        if row.get("error"):
            out.print(f"{shown(row['pair_id'])}: {shown(row['error'])}", highlight=False)
        for note in (row.get("notes") or "").split(" | "):
            if note:
                out.print(f"{shown(row['pair_id'])}: note: {shown(note)}", highlight=False)
    out.print("verdicts: " + ", ".join(f"{v} {n}" for v, n in sorted(summary["verdicts"].items())))
    matched, labelled_count = summary["expected_matched"]
    if labelled_count:
        out.print(f"expected labels: {matched} of {labelled_count} matched", highlight=False)
    if summary["false_passes"]:
        out.print(f"[bold]false passes at atol={atol}, rtol={rtol}:[/] " + shown(", ".join(summary["false_passes"])))
    for problem, need in summary["needed_atol_by_problem"].items():  # per precision: bf16's never raises fp32's
        atols = ", ".join(f"{atol:.3g} in {precision}" for precision, atol in need.items())
        out.print(f"{shown(problem)}: its explained pairs need atol ≈ {atols}", highlight=False)
    timing = result["timing"]
    if timing["pairs"]:
        built = f", {timing['build_s']:.0f} s building {timing['built_ahead']} ahead" if timing["built_ahead"] else ""
        out.print(
            f"{timing['pairs']} pairs in {timing['wall_s']:.0f} s ({timing['pairs_per_hour']:.0f} pairs/hour) on "
            f"{timing['slots']} {timing['device']} slot(s): {timing['explain_s']:.0f} s explaining{built}; the slots "
            f"idle {100 * timing['slot_idle_share']:.0f} % of the time",
            highlight=False,
        )


def _num(value) -> str:
    return "-" if value is None else f"{value:.3g}"
