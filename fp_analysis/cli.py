"""``fpa``: the command-line face of fp_analysis. It parses, calls the library and renders; nothing else.

Every command can print its result as data (``--json``); report and explain runs are appended to the
results store (``fp_analysis.store``) unless ``--no-store``.
"""

from __future__ import annotations

import csv
import json
import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from .errors import FpaError
from .ops.presets import PRESETS

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__.splitlines()[0])
# A pipe or CI log is not a terminal: rich would fold tables to 80 columns, so give it room.
_out = Console(width=None if sys.stdout.isatty() else 200)
_err = Console(stderr=True)

Op = Annotated[str, typer.Argument(help=f"one of {', '.join(PRESETS)}")]
Device = Annotated[str, typer.Option(help="auto (GPU if torch sees one), cpu or cuda")]
AsJson = Annotated[bool, typer.Option("--json", help="print the result as JSON")]
NoStore = Annotated[bool, typer.Option("--no-store", help="do not append this run to the results store")]


def _fail(error: Exception) -> None:
    _err.print(f"[bold red]error:[/] {escape(str(error))}")
    raise typer.Exit(2)


def _store(command: str, rows: list[dict], flags: dict, seed: int | None, device: str, skip: bool) -> None:
    if skip or not rows:
        return
    from .store import append_run, run_metadata

    try:
        append_run(rows, run_metadata(command, flags, seed, device))
    except (OSError, FpaError) as error:  # a full disk must not cost the user the result already printed
        _err.print(f"[yellow]warning:[/] the run was not stored: {error}")


def _shape(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        return tuple(int(v) for v in text.replace("x", ",").split(","))
    except ValueError:
        raise typer.BadParameter(f"--input-shape must look like 8,32,512,512; got {text!r}") from None


def _fmt(value, spec: str = ".2e") -> str:
    return "—" if value is None else format(value, spec)


@app.command()
def report(
    op: Op,
    samples: Annotated[int, typer.Option(help="sampled outputs (CPU twins and bounds)")] = 2000,
    seed: int = 0,
    device: Device = "auto",
    batch: Annotated[int | None, typer.Option(help="override the preset's batch size")] = None,
    input_shape: Annotated[str | None, typer.Option(help="override the input shape, e.g. 2,32,64,64")] = None,
    as_json: AsJson = False,
    csv_path: Annotated[str | None, typer.Option("--csv", help="write rows as CSV (path, or - for stdout)")] = None,
    no_store: NoStore = False,
) -> None:
    """Max/mean error of every kernel variant and of PyTorch's reference (fp32, TF32) against fp64."""
    from .report import report as run_report

    try:
        with Progress(console=_err, transient=True, disable=as_json or csv_path == "-") as progress:
            task = progress.add_task("variants", total=None)
            result = run_report(
                op,
                samples=samples,
                seed=seed,
                device=device,
                batch=batch,
                input_shape=_shape(input_shape),
                progress=lambda name: progress.update(task, description=name, advance=1),
            )
    except FpaError as error:
        _fail(error)
    _store(
        "report",
        result["rows"],
        {"op": op, "samples": samples, "batch": batch, "input_shape": input_shape},
        seed,
        result["device"],
        no_store,
    )
    if csv_path:
        stream = sys.stdout if csv_path == "-" else open(csv_path, "w", newline="")
        writer = csv.DictWriter(stream, fieldnames=list(result["rows"][0]))
        writer.writeheader()
        writer.writerows(result["rows"])
        if stream is not sys.stdout:
            stream.close()
        if csv_path == "-":
            return
    if as_json:
        print(json.dumps(result, indent=1))
        return
    table = Table(
        title=f"{op}: {result['samples']} sampled outputs, K = {result['K']}, input {result['input_shape']}, "
        f"device {result['device']}",
        show_lines=False,
    )
    for column in (
        "variant",
        "max abs",
        "mean abs",
        "max rel",
        "ulp p50/p99/max",
        "bits",
        "bound det / prob",
        "err÷bound",
        "allclose fail",
        "time ms",
    ):
        table.add_column(column, justify="left" if column == "variant" else "right")
    for r in result["rows"]:
        ulps = "—" if r["ulp_p50"] is None else f"{r['ulp_p50']:.1f}/{r['ulp_p99']:.1f}/{r['ulp_max']:.0f}"
        table.add_row(
            escape(r["variant"]),  # labels such as "[tap_outer]" are text, not rich markup
            _fmt(r["max_abs"]),
            _fmt(r["mean_abs"]),
            _fmt(r["max_rel"]),
            ulps,
            _fmt(r["bits_min"], ".1f"),
            f"{_fmt(r['deterministic_bound'])} / {_fmt(r['probabilistic_bound'])}",
            _fmt(r["error_over_bound"], ".3f"),
            "—" if r["allclose_fail_percent"] is None else f"{r['allclose_fail_percent']:.2f}%",
            _fmt(r["time_ms"], ".1f"),
        )
    _out.print(table)
    _out.print(
        f"fp64 truth vs mpmath (50 digits) on 20 outputs: max difference {result['fp64_vs_mpmath_max']:.1e}. "
        "Bounds: Higham γ_n (det.), Higham & Mary 2019 (prob., all outputs at once, p = 0.99); "
        "allclose(1e-4, 1e-4) against fp64."
    )


@app.command()
def explain(
    problem: Annotated[str, typer.Option(help="KernelBench problem file (Model, get_inputs, get_init_inputs)")],
    solution: Annotated[str, typer.Option(help="KernelBench solution file (ModelNew)")],
    device: Device = "auto",
    reference_mode: Annotated[
        str | None, typer.Option(help="CPU only: emulate the reference's operand precision: fp32, tf32, bf16 or fp16")
    ] = None,
    trials: int = 5,
    seed: int = 42,
    atol: float = 1e-4,
    rtol: float = 1e-4,
    samples: Annotated[int, typer.Option(help="sampled outputs for the hypotheses")] = 4000,
    as_json: AsJson = False,
    no_store: NoStore = False,
) -> None:
    """Why does the candidate fail (or pass) KernelBench's check? Exit 0 if arithmetic explains it, 1 if not."""
    from .explain import explain_files

    try:
        result = explain_files(
            problem,
            solution,
            device=device,
            reference_mode=reference_mode,
            trials=trials,
            seed=seed,
            atol=atol,
            rtol=rtol,
            samples=samples,
        )
    except FpaError as error:
        _fail(error)
    data = result.to_dict()
    rows = [
        {
            "cause": c["name"],
            "side": c["side"],
            "residual_max": c["residual_max"],
            "evidence": c["evidence"],
            "explained": result.explained,
            "verdict": result.verdict,
            "problem": problem,
            "solution": solution,
            "mismatch_max_abs": result.mismatch["max_abs"],
        }
        for c in data["causes"]
    ] or [
        {
            "cause": None,
            "explained": result.explained,
            "verdict": result.verdict,
            "problem": problem,
            "solution": solution,
            "mismatch_max_abs": result.mismatch["max_abs"],
        }
    ]
    _store(
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
    )
    if as_json:
        print(json.dumps(data, indent=1, default=str))
    else:
        _print_explanation(result)
    raise typer.Exit(0 if result.explained else 1)


def _print_explanation(result) -> None:
    m = result.mismatch
    colour = "green" if result.explained else "red"
    _out.print(
        f"KernelBench check: {m['failed_trials']} of {len(result.trials)} trials fail allclose(atol={m['atol']}, "
        f"rtol={m['rtol']}); max |difference| {m['max_abs']:.3g}, mean {m['mean_abs']:.3g}, up to "
        f"{100 * m['allclose_fail_fraction']:.2f}% of elements failing."
    )
    how = "explained by arithmetic" if result.explained else "not explained by arithmetic"
    _out.print(f"[bold {colour}]verdict: {result.verdict}[/] ({how})")
    for c in result.causes:
        _out.print(f"  • [bold]{c.name}[/] ({c.side}): {escape(c.evidence)}. Residual max {c.residual_max:.3g}.")
    for name, stats in (("candidate", result.candidate_vs_fp64), ("reference", result.reference_vs_fp64)):
        if stats:
            _out.print(f"  {name} vs fp64 (sampled): max {stats['max_abs']:.3g}, mean {stats['mean_abs']:.3g}")
    tol = result.recommended_tolerance
    if tol.get("atol") is not None:
        _out.print(
            f"  principled tolerance: atol = {tol['atol']:.3g}, rtol = {tol['rtol']} ({tol['basis']}); "
            f"from the measured difference alone: {tol['measured_atol']:.3g}"
        )


@app.command()
def tolerance(
    op: Op,
    mode: Annotated[str, typer.Option(help="the reference's precision: fp32, tf32, bf16, fp16")] = "tf32",
    samples: int = 2000,
    seed: int = 0,
    as_json: AsJson = False,
) -> None:
    """atol/rtol for comparing an fp32 kernel with a reference in MODE, from the bounds and measured errors."""
    from .tolerance_report import tolerance_report

    try:
        result = tolerance_report(op, mode, samples=samples, seed=seed)
    except FpaError as error:
        _fail(error)
    if as_json:
        print(json.dumps(result, indent=1))
        return
    for line in result["reasoning"]:
        _out.print(escape(line))
    _out.print(f"[bold]recommended: atol = {result['atol']:.3g}, rtol = {result['rtol']}[/]")


@app.command()
def orders(
    preset: Annotated[str, typer.Option(help=f"one of {', '.join(PRESETS)}")] = "dilated_conv2d",
    samples: int = 2000,
    seed: int = 0,
    batch: int | None = None,
    as_json: AsJson = False,
) -> None:
    """The accumulation-order error table: every order × operand rounding on sampled outputs, with bounds."""
    from .order_table import format_table, mpmath_spot_check, order_table, preset_terms

    try:
        spec, terms = preset_terms(preset, samples, seed, batch)
        rows = order_table(spec, terms)
        spot = mpmath_spot_check(terms)
    except FpaError as error:
        _fail(error)
    if as_json:
        print(
            json.dumps(
                {
                    "preset": preset,
                    "samples": terms.M,
                    "K": terms.K,
                    "seed": seed,
                    "fp64_vs_mpmath_max": spot,
                    "rows": [r.to_dict() for r in rows],
                },
                indent=1,
            )
        )
        return
    print(
        f"{preset}: {terms.M} sampled outputs, K = {terms.K} terms each, seed {seed}; errors against the correctly "
        f"rounded fp64 sum (fp64 vs 50-digit mpmath on 20 outputs: {spot:.1e})\n"
    )
    print(format_table(rows))


def main() -> None:
    """Entry point of the ``fpa`` script and ``python -m fp_analysis``."""
    app()


@app.command()
def fuzz(
    op: Annotated[str | None, typer.Argument(help="conv2d, conv3d_kk1 or conv_gelu: fuzz our own variants")] = None,
    problem: Annotated[str | None, typer.Option(help="KernelBench problem file to fuzz against")] = None,
    solution: Annotated[str | None, typer.Option(help="KernelBench solution file (ModelNew) to fuzz")] = None,
    max_examples: Annotated[
        int, typer.Option(help="examples to try (profile: HYPOTHESIS_PROFILE=thorough or --max-examples 2000)")
    ] = 200,
    device: Device = "auto",
    seed: int = 0,
    replay: Annotated[str | None, typer.Option(help="replay one example (the JSON a failure prints)")] = None,
    as_json: AsJson = False,
) -> None:
    """Search configs and data for a failure, shrink it to a minimal example. Exit 1 when one is found."""
    import os

    from .fuzz import fuzz_kernelbench, fuzz_op, replay_kernelbench

    if max_examples is None:
        max_examples = 2000 if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else 200
    try:
        if (problem is None) != (solution is None):
            raise typer.BadParameter("give both --problem and --solution, or neither")
        if problem is not None and op is not None:
            raise typer.BadParameter("give OP or --problem/--solution, not both")
        if problem is not None and replay is not None:
            result = replay_kernelbench(problem, solution, replay, device=device)
        elif problem is not None:
            result = fuzz_kernelbench(problem, solution, max_examples=max_examples, device=device, seed=seed)
        elif op is not None:
            result = fuzz_op(op, max_examples=max_examples, device=device, seed=seed)
        else:
            raise typer.BadParameter("give OP (conv2d, conv3d_kk1, conv_gelu) or --problem and --solution")
    except FpaError as error:
        _fail(error)
    if as_json:
        print(json.dumps(result, indent=1, default=str))
    else:
        _out.print(f"{result['examples']} examples tried; {len(result['failures'])} failure(s).")
        for f in result["failures"]:
            verdict = (f.get("explanation") or {}).get("verdict")
            evidence = (f.get("explanation") or {}).get("evidence") or "; ".join(
                c["evidence"] for c in (f.get("explanation") or {}).get("causes", [])
            )
            _out.print(f"[bold red]minimal failing config[/]: {escape(json.dumps(f['config']))}")
            _out.print(f"  {verdict}: {escape(str(evidence))}")
            _out.print(f"  reproduce: {escape(f['command'])}", soft_wrap=True)
    raise typer.Exit(1 if result["failures"] else 0)


@app.command()
def bench(
    op: Annotated[str, typer.Argument(help="conv2d, conv3d_kk1 or conv_gelu (timed on its seed preset)")],
    batch: Annotated[int | None, typer.Option(help="replace the preset's batch size (default: full size)")] = None,
    reps: Annotated[int, typer.Option(help="timed calls per row (fewer for rows slower than --budget)")] = 20,
    rotate: Annotated[int, typer.Option(help="input sets used in turn, so no call finds its input in L2")] = 3,
    budget: Annotated[float, typer.Option(help="seconds of timed calls per row at most (at least 3 calls)")] = 10.0,
    tiled_only: Annotated[bool, typer.Option("--tiled-only", help="time only the tiled variants")] = False,
    match: Annotated[str | None, typer.Option(help="time only the kernel rows whose label contains this text")] = None,
    out: Annotated[
        str | None, typer.Option(help="JSON to merge into (default experiments/results/bench_<gpu>.json)")
    ] = None,
    figure: Annotated[
        str | None, typer.Option(help="Pareto PNG (default experiments/figures/bench_<op>_<gpu>.png)")
    ] = None,
    kernels_tree: Annotated[
        str | None, typer.Option(help="tree id of kernels/ (default: git rev-parse HEAD:kernels)")
    ] = None,
    replot: Annotated[
        str | None, typer.Option(help="no GPU: redraw the Pareto plot of OP from this results file, then stop")
    ] = None,
    as_json: AsJson = False,
) -> None:
    """GPU: time every fast variant beside cuDNN fp32/TF32/fp64 and the fp64 reference; error vs fp64; Pareto plot."""
    from . import bench as bench_lib

    if replot:
        try:
            result = bench_lib.load(replot, op)
        except (FpaError, OSError) as error:
            _fail(error)
        path = figure or f"experiments/figures/bench_{op}_{bench_lib.gpu_slug(result.meta['device'])}.png"
        bench_lib.plot_pareto(result, path)
        _out.print(f"wrote {path}")
        return
    try:
        from fpa_kernels.variants import Schedule

        variants = bench_lib.default_variants(op) if op in bench_lib.OP_PRESETS else None
        if tiled_only and variants is not None:
            variants = [v for v in variants if v.schedule is Schedule.TILED]
        tree = kernels_tree or bench_lib.kernels_tree_of_checkout()
        result = bench_lib.bench(
            op,
            variants,
            batch=batch,
            rotate=rotate,
            reps=reps,
            budget_s=budget,
            kernels_tree=tree,
            log=lambda line: _err.print(escape(line), highlight=False),
            match=match,
        )
    except FpaError as error:
        _fail(error)
    slug = bench_lib.gpu_slug(result.meta["device"])
    out_path = out or f"experiments/results/bench_{slug}.json"
    fig_path = figure or f"experiments/figures/bench_{op}_{slug}.png"
    bench_lib.save(result, out_path)
    bench_lib.plot_pareto(result, fig_path)
    if as_json:
        print(json.dumps({"meta": result.meta, "records": result.records}, indent=1, default=float))
        return
    table = Table(title=f"fpa bench {op} — {result.meta['device']} ({out_path}, {fig_path})")
    for col in ("variant", "kind", "kernel", "time ms", "TFLOP/s", "% fp32 peak", "max |err| vs fp64", "allclose fail"):
        table.add_column(col, justify="left" if col in ("variant", "kind", "kernel") else "right")
    for r in sorted(result.records, key=lambda r: r["time_ms"]):
        pct = r["pct_fp32_peak"]
        table.add_row(
            escape(r["variant"]),
            r["kind"],
            r.get("kernel", "-"),
            f"{r['time_ms']:.3f}",
            f"{r['tflops']:.1f}",
            "-" if pct is None else f"{pct:.0f}",
            _fmt(r["max_abs_err_vs_fp64"]),
            f"{100 * r['allclose_1e-4_fail_frac']:.2f}%",
        )
    _out.print(table)
