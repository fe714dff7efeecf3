"""``fpa report``: the error of every kernel variant and of PyTorch's reference against fp64 (table, JSON or CSV)."""

from __future__ import annotations

import csv
import pathlib
import sys
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from .. import records
from ..errors import ParameterError
from ..run.interrupts import work_done
from .arguments import AsJson, Device, NoStore, Op, Samples, check_samples, csv_target, parse_shape
from .console import err, fmt, out
from .storing import store_run


def report(
    op: Op,
    samples: Samples = 2000,
    seed: int = 0,
    device: Device = "auto",
    batch: Annotated[int | None, typer.Option(help="override the preset's batch size")] = None,
    input_shape: Annotated[str | None, typer.Option(help="override the input shape, e.g. 2,32,64,64")] = None,
    as_json: AsJson = False,
    csv_path: Annotated[str | None, typer.Option("--csv", help="write rows as CSV (path, or - for stdout)")] = None,
    no_store: NoStore = False,
) -> None:
    """Max/mean error of every kernel variant and of PyTorch's reference (fp32, TF32) against fp64."""
    from ..study.report import report as run_report

    check_samples(samples)
    if as_json and csv_path == "-":
        raise ParameterError("Got --json and --csv -: both would print to stdout; give --csv a file path.")
    csv_file = csv_target(csv_path)
    with Progress(console=err, transient=True, disable=as_json or csv_path == "-") as progress:
        task = progress.add_task("variants", total=None)
        result = run_report(
            op,
            samples=samples,
            seed=seed,
            device=device,
            batch=batch,
            input_shape=parse_shape(input_shape),
            progress=lambda name: progress.update(task, description=name, advance=1),
        )
    store_run(
        "report",
        result["rows"],
        {"op": op, "samples": samples, "batch": batch, "input_shape": input_shape},
        seed,
        result["device"],
        no_store,
    )
    if csv_path:
        _write_csv(csv_file, result["rows"])
        if csv_path == "-":
            return
    work_done()  # the work is done: a signal now does not cut its output short
    if as_json:
        print(records.dumps(result))
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
            fmt(r["max_abs"]),
            fmt(r["mean_abs"]),
            fmt(r["max_rel"]),
            ulps,
            fmt(r["bits_min"], ".1f"),
            f"{fmt(r['deterministic_bound'])} / {fmt(r['probabilistic_bound'])}",
            fmt(r["error_over_bound"], ".3f"),
            "—" if r["allclose_fail_percent"] is None else f"{r['allclose_fail_percent']:.2f}%",
            fmt(r["time_ms"], ".1f"),
        )
    out.print(table)
    out.print(
        f"fp64 truth vs mpmath (50 digits) on 20 outputs: max difference {result['fp64_vs_mpmath_max']:.1e}. "
        "Bounds: Higham γ_n (det.), Higham & Mary 2019 (prob., all outputs at once, p = 0.99); "
        "allclose(1e-4, 1e-4) against fp64."
    )


def _write_csv(target: pathlib.Path | None, rows: list[dict]) -> None:
    try:
        stream = sys.stdout if target is None else open(target, "w", newline="")
        try:
            writer = csv.DictWriter(stream, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        finally:
            if stream is not sys.stdout:
                stream.close()
    except OSError as error:  # a full disk, /dev/full: the results are in the store and can be printed again
        raise ParameterError(f"Got --csv {target}, which could not be written: {error}") from None
