"""``fpa tolerance``: the atol/rtol to compare an fp32 kernel with a reference of a given precision."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from .. import records
from ..run.interrupts import work_done
from .arguments import AsJson, Op, Samples, check_samples
from .console import out


def tolerance(
    op: Op,
    mode: Annotated[str, typer.Option(help="the reference's precision: fp32, tf32, bf16, fp16")] = "tf32",
    samples: Samples = 2000,
    seed: int = 0,
    as_json: AsJson = False,
) -> None:
    """atol/rtol for comparing an fp32 kernel with a reference in MODE, from the bounds and measured errors."""
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
