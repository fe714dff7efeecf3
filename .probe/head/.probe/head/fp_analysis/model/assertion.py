"""``assert_equivalent``: torch.testing.assert_close, with the cause of a failure named in its message."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..errors import FpaError
from ..numerics.metrics import error_stats, format_mismatch
from .engine import Effort, analyse_model

__all__ = ["CloseOptions", "assert_equivalent"]


@dataclass(frozen=True)
class CloseOptions:
    """The rest of ``torch.testing.assert_close``'s options, meaning what they mean there: whether NaN equals NaN
    (``equal_nan``), whether the dtypes must match (``check_dtype``), and the message to fail with instead of
    torch's (``msg``)."""

    equal_nan: bool = False
    check_dtype: bool = True
    msg: str | None = None


def assert_equivalent(
    actual: torch.Tensor,
    expected: torch.Tensor,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    model: torch.nn.Module | None = None,
    inputs: tuple | list | None = None,
    samples: int = 2000,
    close: CloseOptions = CloseOptions(),
) -> None:
    """Assert ``actual`` ≈ ``expected`` exactly as ``torch.testing.assert_close`` does, with its ``rtol`` and
    ``atol`` and its other options in ``close`` (e.g. ``close=CloseOptions(equal_nan=True)``). Returns None.

    On failure the message keeps torch's counts and greatest differences and adds the explanation: with
    ``model`` (the reference module that produced ``expected``) and its ``inputs``, the causes that fit
    (e.g. ``reference_tf32``), the residual after re-creating them and a principled tolerance (the analysis
    compares ``samples`` outputs with the CPU twins); without them, the error statistics and a note on what to
    pass to get the cause.
    """
    try:
        torch.testing.assert_close(
            actual,
            expected,
            rtol=rtol,
            atol=atol,
            equal_nan=close.equal_nan,
            check_dtype=close.check_dtype,
            msg=close.msg,
        )
        return
    except AssertionError as failure:
        lines = [str(failure), ""]
    if not (
        isinstance(actual, torch.Tensor)
        and isinstance(expected, torch.Tensor)
        and actual.shape == expected.shape
        and actual.is_floating_point()
        and expected.is_floating_point()
    ):
        raise AssertionError("\n".join(lines))
    lines.append(
        "fp_analysis: "
        + format_mismatch(
            error_stats(actual, expected, atol=1e-5 if atol is None else atol, rtol=1.3e-6 if rtol is None else rtol)
        )
    )
    if model is None or not inputs:
        lines.append("Pass model= (the reference module) and inputs= to have the cause named.")
        raise AssertionError("\n".join(lines))
    try:
        effort = Effort(twin_samples=samples)
        analysis = analyse_model(model, list(inputs), expected.detach(), actual.detach(), effort=effort)
    except FpaError as error:
        lines.append(f"fp_analysis could not model the reference: {error}")
        raise AssertionError("\n".join(lines)) from None
    lines.append(f"Explanation: {analysis.verdict} ({'arithmetic' if analysis.explained else 'not arithmetic'}).")
    lines += [
        f"  {c.name} ({c.side}{', ' + c.op if c.op else ''}): {c.evidence}; residual max {c.residual_max:.3g}"
        for c in analysis.causes
    ]
    if analysis.explained:
        tolerance = analysis.recommended_tolerance
        lines.append(
            f"  A principled tolerance for this pair: atol={tolerance['atol']:.3g}, rtol=0 ({tolerance['basis']})."
        )
    raise AssertionError("\n".join(lines))
