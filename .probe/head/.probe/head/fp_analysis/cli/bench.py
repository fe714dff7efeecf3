"""``fpa bench``: time every fast variant on the GPU beside cuDNN and fp64, and draw the Pareto plot."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from .. import records
from ..errors import ParameterError
from ..options import PRESET_KERNEL_OPS, PRESET_NAMES, check_op
from ..run.interrupts import work_done
from . import console  # console.out: bench's --out option takes the name
from .arguments import AsJson
from .console import err, fmt


def bench(
    op: Annotated[str, typer.Argument(help=f"one of {', '.join(PRESET_NAMES)} (timed at its full size)")],
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
    from ..study import bench as bench_lib

    kernel_op = PRESET_KERNEL_OPS[check_op(op)]  # the results and figures are named by the kernels' op
    if replot:
        try:
            result = bench_lib.load(replot, op)
        except OSError as error:
            raise ParameterError(f"Got --replot {replot}, which cannot be read: {error}") from None
        path = figure or f"experiments/figures/bench_{kernel_op}_{bench_lib.gpu_slug(result.meta['device'])}.png"
        bench_lib.plot_pareto(result, path)
        console.out.print(f"wrote {path}")
        return
    from fpa_kernels.variants import Schedule

    variants = bench_lib.default_variants(kernel_op)
    if tiled_only and variants is not None:
        variants = [v for v in variants if v.schedule is Schedule.TILED]
    tree = kernels_tree or bench_lib.kernels_tree_of_checkout()
    result = bench_lib.bench(
        op,
        variants,
        bench_lib.BenchOptions(batch=batch, rotate=rotate, reps=reps, budget_s=budget, match=match),
        kernels_tree=tree,
        log=lambda line: err.print(escape(line), highlight=False),
    )
    slug = bench_lib.gpu_slug(result.meta["device"])
    out_path = out or f"experiments/results/bench_{slug}.json"
    fig_path = figure or f"experiments/figures/bench_{kernel_op}_{slug}.png"
    bench_lib.save(result, out_path)
    bench_lib.plot_pareto(result, fig_path)
    work_done()  # the work is done: a signal now does not cut its output short
    if as_json:
        print(records.dumps({"meta": result.meta, "records": result.records}))
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
            fmt(r["max_abs_err_vs_fp64"]),
            f"{100 * r['allclose_1e-4_fail_frac']:.2f}%",
        )
    console.out.print(table)
