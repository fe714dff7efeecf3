"""``fpa explain``: why a KernelBench pair fails (or passes) its check; exit 0 if arithmetic explains it, 1 if not."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from .. import records
from ..errors import ExitCode
from ..options import DEFAULT_TIMEOUT_S, ExplainOptions
from ..run.interrupts import work_done
from .arguments import AsJson, CheckAtol, CheckRtol, CheckSeed, Device, NoStore, ReferenceMode, Timeout
from .console import out, shown
from .storing import prepare_store, store_run
from .worker import WorkerStatus, print_worker


def explain(
    problem: Annotated[str, typer.Option(help="KernelBench problem file (Model, get_inputs, get_init_inputs)")],
    solution: Annotated[str, typer.Option(help="KernelBench solution file (ModelNew)")],
    device: Device = "auto",
    reference_mode: ReferenceMode = None,
    trials: Annotated[int, typer.Option(help="KernelBench trials, each with fresh inputs; 1 to 10000")] = 5,
    seed: CheckSeed = 42,
    atol: CheckAtol = 1e-4,
    rtol: CheckRtol = 1e-4,
    samples: Annotated[int, typer.Option(help="sampled outputs for the hypotheses; at least 1")] = 4000,
    timeout: Timeout = DEFAULT_TIMEOUT_S,
    as_json: AsJson = False,
    no_store: NoStore = False,
) -> None:
    """Why does the candidate fail (or pass) KernelBench's check? Exit 0 if arithmetic explains it, 1 if not.

    Both files run in a worker process of their own (each file sees its own folder's modules); what they
    print is captured and shown shortened (all of it under "worker" with --json).
    """
    from ..run.children import start_fork_server

    start_fork_server()  # first: the rest of this command's start overlaps the server's imports
    from ..explain.jobs import explain_files

    options = ExplainOptions(device, reference_mode, trials, seed, atol, rtol, samples, timeout)
    prepare_store(no_store)
    with WorkerStatus(enabled=not as_json) as status:
        result = explain_files(problem, solution, options, on_event=status.update)
    common = {
        "explained": result.explained,
        "verdict": result.verdict,
        "problem": problem,
        "solution": solution,
        "mismatch_max_abs": result.mismatch["max_abs"],
    }
    rows = [
        {"cause": c.name, "side": c.side, "residual_max": c.residual_max, "evidence": c.evidence, **common}
        for c in result.causes
    ] or [{"cause": None, **common}]
    store_run(
        "explain",
        rows,
        {
            "problem": problem,
            "solution": solution,
            "reference_mode": reference_mode,
            "trials": trials,
            "atol": atol,
            "rtol": rtol,
        },
        seed,
        result.context.get("device", device),
        no_store,
        (result.worker or {}).get("versions"),
    )
    work_done()  # the work is done: a signal now does not cut its output short
    if as_json:
        print(records.dumps(result.to_dict()))
    else:
        _print_explanation(result)
    raise typer.Exit(ExitCode.OK if result.explained else ExitCode.NOT_EXPLAINED)


def _stat(stats: dict, key: str) -> str:
    value = stats.get(key)
    return "n/a" if value is None else f"{value:.3g}"


def _differences(stats: dict, over: str = "") -> str:
    """'max |difference| …, mean …' of an error record, or that no output is finite on both sides."""
    if stats.get("max_abs") is None:
        return "no output is finite on both sides"
    return f"max |difference| {_stat(stats, 'max_abs')}, mean {_stat(stats, 'mean_abs')}{over}"


def _nonfinite_line(nf: dict, names: tuple[str, str] = ("candidate", "reference"), where: bool = True) -> str | None:
    """NaN/Inf counted per side, or None when neither side has any."""
    if not (nf.get("nan_actual") or nf.get("nan_reference") or nf.get("inf_actual") or nf.get("inf_reference")):
        return None
    first = f", the first at output {tuple(nf['examples'][0])}" if where and nf.get("examples") else ""
    return (
        f"non-finite: {names[0]} {nf['nan_actual']} NaN and {nf['inf_actual']} ±inf, {names[1]} "
        f"{nf['nan_reference']} NaN and {nf['inf_reference']} ±inf; {nf['mismatched_nonfinite']} outputs "
        f"non-finite on one side only{first}"
    )


def _check_words(m: dict, trials: int, over: str) -> str:
    return (
        f"{m['failed_trials']} of {trials} trials fail allclose(atol={m['atol']}, rtol={m['rtol']}); "
        f"{_differences(m, over)}; up to {100 * m['allclose_fail_fraction']:.2f}% of elements failing."
    )


def _print_explanation(result) -> None:
    m = result.mismatch
    colour = "green" if result.explained else "red"
    nonfinite = _nonfinite_line(m.get("nonfinite") or {})
    smaller = "smaller_instance" in result.context  # analysed on a smaller instance of the problem
    full_size = not smaller or result.context.get("full_size_check_ran")
    if not full_size:
        out.print("KernelBench check at the problem's size: did not fit beside fpa's copies (see the notes)")
    if m.get("wrong_output"):
        out.print(f"KernelBench check: fails: {m['wrong_output']}; allclose cannot compare them.", highlight=False)
    else:
        over = f" over the {m['finite_pairs']} of {m['outputs']} outputs finite on both sides" if nonfinite else ""
        head = "KernelBench check" if full_size else "on the smaller instance analysed"
        out.print(f"{head}: {_check_words(m, len(result.trials), over)}", highlight=False)
    if smaller and full_size:
        analysed = _check_words(result.context["analysed_check"], len(result.trials), "")
        out.print(f"on the smaller instance analysed: {analysed}", highlight=False)
    if nonfinite:
        out.print(f"  {nonfinite} (trial {m['nonfinite']['trial'] + 1})", highlight=False)
    how = "explained by arithmetic" if result.explained else "not explained by arithmetic"
    out.print(f"[bold {colour}]verdict: {result.verdict}[/] ({how})")
    for c in result.causes:
        residual = "" if c.residual_max is None else f" Residual max {c.residual_max:.3g}."
        _item("  • ", f"[bold]{c.name}[/] ({c.side}): {shown(c.evidence)}.{residual}")
    items = result.context.get("analysed_batch_items")
    if items and len(items["items"]) > 1:  # the location's batch items count from the first of them
        first, last = items["items"][0], items["items"][-1]
        scope = f" (batch items {first}…{last} of {items['of']}; the batch items located above count from {first} as 0)"
    else:
        scope = f" (batch item {items['items'][0]} of {items['of']})" if items else ""
    for name, stats in (("candidate", result.candidate_vs_fp64), ("reference", result.reference_vs_fp64)):
        if stats:
            line = f"{name} vs the Model in fp64{scope}: {_differences(stats)}"
            extra = _nonfinite_line(stats.get("nonfinite") or {}, (name, "fp64"), where=False)
            _item("  ", line + (f"; {extra}" if extra else ""))
    if result.floor and result.floor.get("method") != "exact":  # "exact": equal outputs needed no floor
        f = result.floor
        linear = [o["description"] for o in result.ops if o["kind"] == "linear"]
        _item(
            "  ",
            f"floor: {f['floor_units']:.1f} units of σ (8 × the fp32 Model's own {f['baseline_units']:.2f}; σ from "
            f"{f['runs'] + 2} Monte-Carlo runs) over {f['outputs']} outputs; {len(result.ops)} ops"
            + (f", linear: {', '.join(linear)}" if linear else ""),
        )
    tol = result.recommended_tolerance
    if tol.get("atol") is not None and not result.explained:
        # what arithmetic alone would need is no tolerance to grade this candidate by: a bug smaller than it passes
        _item("  ", "principled tolerance: none for a difference arithmetic does not explain")
    elif tol.get("atol") is not None:
        _item("  ", f"principled tolerance: atol = {tol['atol']:.3g}, rtol = {tol['rtol']} ({tol['basis']})")
    for note in result.notes:
        _item("  ", f"note: {shown(note)}")
    print_worker(result.worker)


def _item(lead: str, markup: str) -> None:
    """One item of the explanation: ``lead`` then ``markup``, its wrapped lines indented under the text, not at the
    margin (a grid of two columns: rich wraps the second alone)."""
    grid = Table.grid()
    grid.add_column(width=len(lead), no_wrap=True)
    grid.add_column()
    grid.add_row(lead, Text.from_markup(markup))
    out.print(grid, highlight=False)
