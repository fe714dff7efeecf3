"""``assert_equivalent``: torch.testing.assert_close, with the cause of a failure named in its message."""

from __future__ import annotations

import torch

from .errors import FpaError
from .model.engine import analyse_model
from .numerics.metrics import error_stats, format_mismatch

__all__ = ["assert_equivalent"]


def assert_equivalent(
    actual: torch.Tensor,
    expected: torch.Tensor,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_dtype: bool = True,
    model: torch.nn.Module | None = None,
    inputs: tuple | list | None = None,
    samples: int = 2000,
    msg: str | None = None,
) -> None:
    """Assert ``actual`` ≈ ``expected`` exactly as ``torch.testing.assert_close`` does (same arguments).

    On failure the message keeps torch's counts and greatest differences and adds the explanation: with
    ``model`` (the reference module that produced ``expected``) and its ``inputs``, the causes that fit
    (e.g. ``reference_tf32``), the residual after re-creating them and a principled tolerance; without
    them, the error statistics and a note on what to pass to get the cause.
    """
    try:
        torch.testing.assert_close(
            actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=check_dtype, msg=msg
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
        analysis = analyse_model(model, list(inputs), expected.detach(), actual.detach(), twin_samples=samples)
    except FpaError as error:
        lines.append(f"fp_analysis could not model the reference: {error}")
        raise AssertionError("\n".join(lines)) from None
    lines.append(f"Explanation: {analysis.verdict} ({'arithmetic' if analysis.explained else 'not arithmetic'}).")
    lines += [
        f"  {c.name} ({c.side}{', ' + c.op if c.op else ''}): {c.evidence}; residual max {c.residual_max:.3g}"
        for c in analysis.causes
    ]
    if analysis.explained:
        tolerance = analysis.tolerance
        lines.append(
            f"  A principled tolerance for this pair: atol={tolerance['atol']:.3g}, rtol=0 ({tolerance['basis']})."
        )
    raise AssertionError("\n".join(lines))
