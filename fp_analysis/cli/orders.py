"""``fpa orders``: the accumulation-order error table of a preset."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import records
from ..options import PRESET_NAMES, check_op
from ..run.interrupts import work_done
from .arguments import AsJson, Samples, check_samples
from .console import err


def orders(
    preset: Annotated[str, typer.Option(help=f"one of {', '.join(PRESET_NAMES)}")] = "dilated_conv2d",
    samples: Samples = 2000,
    seed: Annotated[int, typer.Option(help="seed of the inputs and of the sampled outputs")] = 0,
    batch: Annotated[int | None, typer.Option(help="override the preset's batch size")] = None,
    as_json: AsJson = False,
) -> None:
    """The accumulation-order error table: every order × operand rounding on sampled outputs, with bounds."""
    from ..study.order_table import format_table, mpmath_spot_check, order_table, preset_terms

    check_op(preset)
    check_samples(samples)
    with err.status(f"{preset}: gathering {samples} outputs' terms…") as status:  # stderr: --json stays clean
        spec, terms = preset_terms(preset, samples, seed, batch)
        status.update(f"{preset}: every order × operand rounding on {terms.M} outputs of {terms.K} terms…")
        rows = order_table(spec, terms)
        status.update(f"{preset}: fp64 against 50-digit mpmath on 20 outputs…")
        spot = mpmath_spot_check(terms)
    work_done()  # the work is done: a signal now does not cut its output short
    if as_json:
        table = {"preset": preset, "samples": terms.M, "K": terms.K, "seed": seed, "fp64_vs_mpmath_max": spot}
        print(records.dumps({**table, "rows": [r.to_dict() for r in rows]}))
        return
    print(
        f"{preset}: {terms.M} sampled outputs, K = {terms.K} terms each, seed {seed}; errors against the correctly "
        f"rounded fp64 sum (fp64 vs 50-digit mpmath on 20 outputs: {spot:.1e})\n"
    )
    print(format_table(rows))
