"""``fpa tolerance``: the atol/rtol to compare an fp32 kernel with a reference of a given precision (``OP``, a seed
op), or every precision of candidate against a KernelBench problem's reference and the check's power (``--problem``).
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from .. import records
from ..errors import ParameterError
from ..options import DEFAULT_TIMEOUT_S, PRESET_NAMES
from ..run.interrupts import work_done
from .arguments import AsJson, check_samples
from .console import fmt, out, shown
from .worker import WorkerStatus, print_worker

# The options of each form, with their defaults there: an option given to the other form is refused by name.
_OP_ONLY = {"mode": "tf32", "samples": 2000}
_PROBLEM_ONLY = {"atol": None, "rtol": None, "device": "auto", "timeout": DEFAULT_TIMEOUT_S}

_PRECISION_WORDS = {
    "fp32": "fp32, any order",
    "tf32": "tf32 linear ops",
    "bf16": "bf16 (operands / autocast)",
    "fp16": "fp16 (operands / autocast)",
}
_PLACEHOLDER_WORDS = {"zeros": "zeros", "first input": "the first input", "mean": "the reference's mean everywhere"}


def tolerance(
    op: Annotated[
        str | None, typer.Argument(help=f"a seed op: one of {', '.join(PRESET_NAMES)} (or give --problem instead)")
    ] = None,
    problem: Annotated[
        str | None,
        typer.Option(
            help="a KernelBench problem file (Model, get_inputs, get_init_inputs), instead of OP: the atol/rtol an "
            "fp32, TF32, bf16 and fp16 candidate needs against its fp32 reference, and whether zeros, the input or "
            "a constant would pass the check"
        ),
    ] = None,
    mode: Annotated[
        str | None, typer.Option(help="OP only: the reference's precision: fp32, tf32, bf16, fp16 (default tf32)")
    ] = None,
    samples: Annotated[int | None, typer.Option(help="OP only: sampled outputs; at least 1 (default 2000)")] = None,
    seed: Annotated[
        int | None, typer.Option(help="OP: the sample's seed (default 0); --problem: KernelBench's seed (default 42)")
    ] = None,
    atol: Annotated[
        float | None, typer.Option(help="--problem only: the check's atol (default KernelBench's 1e-2)")
    ] = None,
    rtol: Annotated[
        float | None, typer.Option(help="--problem only: the check's rtol (default KernelBench's 1e-2)")
    ] = None,
    device: Annotated[
        str | None, typer.Option(help="--problem only: cpu or cuda; auto: cuda where torch sees a GPU (default auto)")
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            help=f"--problem only: seconds each call into the problem's code may take (default "
            f"{DEFAULT_TIMEOUT_S:g}); then exit 3"
        ),
    ] = None,
    as_json: AsJson = False,
) -> None:
    """The atol/rtol a check needs: for every precision of candidate against a KernelBench problem (--problem),
    with whether zeros, the input or a constant would pass the check; or for an fp32 kernel against a seed op's
    reference in MODE (OP)."""
    given = {"mode": mode, "samples": samples, "atol": atol, "rtol": rtol, "device": device, "timeout": timeout}
    if (op is None) == (problem is None):
        given_words = "both were given" if op is not None else "neither was given"
        raise ParameterError(
            f"fpa tolerance takes exactly one of OP (one of {', '.join(PRESET_NAMES)}) and --problem FILE (a "
            f"KernelBench problem); {given_words}."
        )
    form, other = ("OP", _PROBLEM_ONLY) if op is not None else ("--problem", _OP_ONLY)
    stray = [f"--{name}" for name in other if given[name] is not None]
    if stray:
        verb = "belongs" if len(stray) == 1 else "belong"
        raise ParameterError(
            f"Got {' and '.join(stray)} with {form}, but {' and '.join(stray)} {verb} to the other form of fpa "
            "tolerance (OP takes --mode and --samples; --problem takes --atol, --rtol, --device and --timeout)."
        )
    if op is not None:
        _seed_op(op, mode or _OP_ONLY["mode"], _OP_ONLY["samples"] if samples is None else samples, seed or 0, as_json)
    else:
        _problem(problem, {k: v for k, v in given.items() if k in _PROBLEM_ONLY and v is not None}, seed, as_json)


def _seed_op(op: str, mode: str, samples: int, seed: int, as_json: bool) -> None:
    from ..study.tolerance_report import tolerance_report

    check_samples(samples)
    result = tolerance_report(op, mode, samples=samples, seed=seed)
    work_done()  # the work is done: a signal now does not cut its output short
    if as_json:
        print(records.dumps(result))
        return
    for line in result["reasoning"]:
        out.print(escape(line))
    out.print(f"[bold]recommended: atol = {result['atol']:.3g}, rtol = {result['rtol']}[/]")


def _problem(problem: str, chosen: dict, seed: int | None, as_json: bool) -> None:
    from ..run.children import start_fork_server

    start_fork_server()  # first: the rest of this command's start overlaps the server's imports
    from ..study.problem_tolerance import ToleranceOptions, tolerance_file

    options = ToleranceOptions(**chosen, **({} if seed is None else {"seed": seed}))
    with WorkerStatus(enabled=not as_json) as status:
        result = tolerance_file(problem, options, on_event=status.update)
    work_done()
    if as_json:
        print(records.dumps(result))
        return
    _print_problem(result)


def _print_problem(result: dict) -> None:
    """The table of needed tolerances, the check's power (loudly where it is blind) and the notes."""
    check = f"allclose(atol={result['atol']:g}, rtol={result['rtol']:g})"
    context, floor, reference = result["context"], result["floor"], result["reference"]
    shape = "×".join(map(str, result["shape"])) or "scalar"
    out.print(
        f"fpa tolerance --problem {shown(context['problem'])}: output {shape} ({result['outputs']} outputs), "
        f"trial 1's inputs (seed {context['seed']}, drawn as fpa explain draws them), on {context['device']}",
        highlight=False,
    )
    out.print(
        f"reference (fp32, TF32 off): max |y| {fmt(reference['max_abs'], '.3g')}, mean |y| "
        f"{fmt(reference['mean_abs'], '.3g')}; floor {floor['floor_units']:.1f} units of σ (8 × max(1, the fp32 "
        f"Model's own {floor['baseline_units']:.2f}); σ from {floor['runs']} Monte-Carlo runs), tensor cores "
        f"+{floor['tensor_core_units']:.1f}; margin {floor['margin']:g}",
        highlight=False,
    )
    table = Table(title=f"what a candidate needs to pass against this reference; the check: {check}")
    for column in ("candidate", "atol (rtol 0)", f"rtol at atol {result['atol']:g}", "every such kernel passes",
                   "max |re-creation − ref|", "re-creation passes", "re-creations"):  # fmt: skip
        table.add_column(column, justify="left" if column in ("candidate", "re-creations") else "right")
    for row in result["needed"]:
        table.add_row(
            _PRECISION_WORDS[row["precision"]],
            fmt(row["atol"], ".3g"),
            "none suffices" if row["rtol"] is None else f"{row['rtol']:.3g}",
            "[green]yes[/]" if row["passes_check"] else "[bold red]no[/]",
            fmt(row["max_difference"], ".3g"),
            "yes" if row["recreations_pass"] else "[bold red]no[/]",
            escape(", ".join(row["emulations"])) + (" (round nothing here)" if row["rounds_nothing"] else ""),
        )
    out.print(table)
    out.print(f"power of {check} (as KernelBench calls it: allclose(reference, candidate)):", highlight=False)
    for p in result["power"]:
        if p["passes"] is None:
            verdict = shown(p["why_not"])
        else:
            verdict = "[bold red]PASSES[/]" if p["passes"] else "[green]rejected[/]"
            verdict += (f" (max |difference| {fmt(p['max_difference'], '.3g')}; the check rejects it only while atol < "
                        f"{fmt(p['atol_accepting'], '.3g')})")  # fmt: skip
        out.print(f"  {_PLACEHOLDER_WORDS[p['name']]:<34} {verdict}", highlight=False)
    if result["blind"]:
        passing = " or ".join(_PLACEHOLDER_WORDS[p["name"]] for p in result["power"] if p["passes"])
        out.print(f"[bold red]WARNING: {check} cannot tell a placeholder from a kernel: returning {passing} passes "
                  "it.[/]", highlight=False)  # fmt: skip
    for row in result["needed"]:
        if row["placeholders_passing"]:
            out.print(
                f"  at the {row['precision']} row's atol ({fmt(row['atol'], '.3g')}, rtol 0), "
                f"{' and '.join(_PLACEHOLDER_WORDS[name] for name in row['placeholders_passing'])} would pass too: no "
                f"atol passes every {row['precision']} kernel and rejects them",
                highlight=False,
            )
    for note in result["notes"]:
        out.print(f"  note: {shown(note)}", highlight=False)
    print_worker(result.get("worker"))
