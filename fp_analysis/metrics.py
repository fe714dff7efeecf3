"""Error statistics of one array against a reference: abs / rel / ULP / correct bits / allclose / NaN-Inf.

``error_stats(actual, reference)`` answers "how far apart are these two, and where?" in the units a
floating-point argument needs: absolute and relative error, error in units of the last place (ULP) of
the reference in a chosen format, correct bits, and the fraction of elements ``torch.allclose`` would
reject. Non-finite values are reported apart (``NonfiniteStats``) and never enter the finite statistics.

Everything is evaluated in float64 on the CPU, whatever the inputs' dtype and device: the difference of
two fp32 / bf16 / fp16 values is then (almost always) exact, so the statistics describe the inputs and
not the arithmetic used to compare them. The mismatch message is built apart from the computation
(``format_mismatch``), as torch.testing does with ``make_tensor_mismatch_msg``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import torch

from .errors import DtypeError, ParameterError, ShapeError
from .formats import FORMATS, FloatFormat, get_format

__all__ = ["ErrorStats", "NonfiniteStats", "error_stats", "format_mismatch", "ulp"]

# Upper clip of ``correct bits``: the precision of float64, in which every statistic is evaluated; an
# element that agrees exactly is given this many bits.
_MAX_BITS = 53

# How many example positions of non-finite mismatches are kept.
_MAX_NONFINITE_EXAMPLES = 10

# Default guard of the relative error's denominator: the fp32 smallest normal 2^-126.
_DEFAULT_REL_FLOOR = FORMATS["fp32"].smallest_normal

Index = tuple[int, ...]


@dataclass(frozen=True)
class NonfiniteStats:
    """Where NaN and ±inf occur, kept apart from the finite error statistics.

    ``mismatched_nonfinite`` counts positions whose non-finite pattern differs between the two
    arrays: NaN against a number (or ±inf), +inf against -inf, ±inf against a finite value. A NaN in
    both arrays, or the same infinity in both, is not a pattern mismatch (``allclose`` still rejects
    NaN against NaN, as ``torch.isclose(equal_nan=False)`` does).
    """

    nan_actual: int
    nan_reference: int
    inf_actual: int  # +inf and -inf together
    inf_reference: int
    mismatched_nonfinite: int
    examples: tuple[Index, ...]  # up to 10 mismatched positions, in C (row-major) order

    def to_dict(self) -> dict[str, Any]:
        """Return the record as JSON-safe data (ints and lists of lists of ints)."""
        return {f.name: _json_safe(getattr(self, f.name)) for f in fields(self)}


@dataclass(frozen=True)
class ErrorStats:
    """Error statistics of ``actual`` against ``reference``; see ``error_stats`` for each definition.

    A statistic that is undefined (no element where both values are finite) is ``None``, never NaN.
    A statistic can be ``inf`` only when float64 itself overflows (e.g. a finite difference of two
    float64 values near 1.8e308, or a fp64-format ULP error of a huge error at a reference of 0).
    """

    count: int  # elements
    finite_count: int  # elements where both actual and reference are finite
    max_abs: float | None
    mean_abs: float | None
    rmse: float | None
    max_rel: float | None
    mean_rel: float | None
    ulp_p50: float | None
    ulp_p99: float | None
    ulp_max: float | None
    bits_min: float | None
    bits_median: float | None
    allclose_fail_count: int
    allclose_fail_fraction: float  # 0.0 for empty inputs: nothing fails, torch.allclose is True
    worst_index: Index | None  # position of the largest finite absolute error
    worst_actual: float | None
    worst_reference: float | None
    worst_rel_index: Index | None  # position of the largest finite relative error
    nonfinite: NonfiniteStats
    # The parameters the statistics were computed with, so a record explains itself.
    atol: float
    rtol: float
    rel_floor: float
    fmt: str

    def to_dict(self) -> dict[str, Any]:
        """Return the statistics as JSON-safe data: floats, ints, lists, None.

        Index tuples become lists; a non-finite float (possible only through float64 overflow, see the
        class docstring) becomes ``None``, so ``json.dumps(..., allow_nan=False)`` always succeeds.
        """
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = value.to_dict() if isinstance(value, NonfiniteStats) else _json_safe(value)
        return out

    def summary(self) -> str:
        """Return the one-line mismatch message of these statistics (see ``format_mismatch``)."""
        return format_mismatch(self)


def ulp(x: Any, fmt: str | FloatFormat = "fp32") -> np.ndarray:
    """Return ulp_fmt(x), the spacing of the numbers of format ``fmt`` around |x|, as float64.

    This is the "Goldberg" ulp of Muller et al., *Handbook of Floating-Point Arithmetic*, 2nd ed.
    (2018), §2.6.1: for a real x with 2^e ≤ |x| < 2^(e+1),

        ulp_fmt(x) = 2^(max(e, emin) - p + 1),

    p and emin being the format's precision and smallest normal exponent. It is always an exact power
    of two. ``ulp(0)`` is the smallest subnormal 2^(emin - p + 1); on the subnormal range the
    spacing is that same constant. e is read from ``np.frexp`` (|x| = m·2^k with 1/2 ≤ m < 1, so
    e = k - 1), never from ``log2``, whose rounding misplaces values just below a power of two.
    x need not be a number of ``fmt`` (a float64 reference is measured in fp32 ULPs); above the
    format's largest finite number the formula is extrapolated (emax is not applied). Returns NaN
    where x is NaN or ±inf.
    """
    f = get_format(fmt)
    x = np.abs(np.asarray(x, dtype=np.float64))
    _, k = np.frexp(x)
    e = np.where(x == 0, f.emin, k.astype(np.int64) - 1)  # frexp(0) gives k=0, which is not e
    result = np.where(np.isfinite(x), np.ldexp(1.0, np.maximum(e, f.emin) - f.precision + 1), np.nan)
    return result if result.ndim else result[()]  # a scalar in, a scalar out


def error_stats(
    actual: Any,
    reference: Any,
    *,
    atol: float = 1e-4,
    rtol: float = 1e-4,
    rel_floor: float | None = None,
    fmt: str = "fp32",
) -> ErrorStats:
    """Return the error statistics of ``actual`` against ``reference`` (same shape, no broadcasting).

    Inputs are numpy arrays or torch tensors of a floating dtype, on any device; both are converted
    to float64 numpy arrays on the CPU. Shapes must be equal: broadcasting is deliberately not
    allowed, since a broadcast reference silently compares the wrong elements.

    Statistics over the finite pairs (both values finite), with d = |a - r| evaluated in float64:

    - ``max_abs``, ``mean_abs``, ``rmse`` = sqrt(mean(d²)).
    - ``max_rel``, ``mean_rel`` of the relative error d / max(|r|, rel_floor) (Higham, *Accuracy and
      Stability of Numerical Algorithms*, 2nd ed. (2002), §1.2, with a guarded denominator). The guard
      is needed because the relative error is undefined at r = 0 and meaningless for |r| near
      underflow, where a tiny absolute error yields an enormous ratio. The default ``rel_floor`` is
      the fp32 smallest normal 2^-126. Callers comparing conv outputs in which cancellation leaves
      near-zero references may pass a larger floor (e.g. ``rel_floor=atol``).
    - ``ulp_p50``, ``ulp_p99``, ``ulp_max``: quantiles of d / ulp_fmt(r), the error in units of the
      last place of the reference in format ``fmt`` (see ``ulp``: Muller et al. 2018, §2.6.1).
      Quantiles interpolate linearly between order statistics (numpy's and torch's default method).
    - ``bits_min``, ``bits_median``: correct bits -log2(relative error) (Higham 2002, §1.2: a relative
      error of 2^-k means about k correct significant bits), with the same guarded relative error,
      clipped to [0, 53]; exact agreement counts as 53, float64's precision.
    - ``worst_index`` (an ``np.unravel_index`` tuple), ``worst_actual``, ``worst_reference``: where
      the largest finite absolute error is, first occurrence in C order; ``worst_rel_index`` likewise
      for the relative error.

    Over all elements:

    - ``allclose_fail_count`` / ``allclose_fail_fraction``: elements failing the elementwise test of
      the torch.allclose documentation, |actual - other| ≤ atol + rtol·|other| (``other`` being the
      reference), with non-finite values handled as ``torch.isclose(equal_nan=False)`` does: equal
      values always pass (so +inf against +inf passes), a NaN anywhere fails, ±inf against anything
      else fails. This equals ``~torch.isclose`` on the float64-converted inputs; on fp32 tensors torch
      evaluates the test in fp32, which can differ from this exact evaluation at the boundary.
    - ``nonfinite``: NaN / inf counts and the positions where the non-finite pattern differs.

    Raises ``ShapeError`` when the shapes differ, ``DtypeError`` for a non-floating input, and
    ``ParameterError`` when atol or rtol is negative or not finite, rel_floor is not a positive
    finite number, or fmt is not one of "fp64", "fp32", "tf32", "bf16", "fp16".
    """
    atol = _check_tolerance("atol", atol)
    rtol = _check_tolerance("rtol", rtol)
    rel_floor = _check_rel_floor(rel_floor)
    f = get_format(fmt)
    a = _to_float64("actual", actual)
    r = _to_float64("reference", reference)
    if a.shape != r.shape:
        raise ShapeError(
            f"actual has shape {tuple(a.shape)} but reference has shape {tuple(r.shape)}; "
            "error_stats compares element by element and does not broadcast."
        )

    shape = a.shape
    count = int(a.size)
    flat_a, flat_r = a.reshape(-1), r.reshape(-1)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        diff_all = np.abs(flat_a - flat_r)
        close = (flat_a == flat_r) | (np.isfinite(diff_all) & (diff_all <= atol + rtol * np.abs(flat_r)))
    fail_count = int(count - np.count_nonzero(close))

    finite = np.isfinite(flat_a) & np.isfinite(flat_r)
    finite_count = int(np.count_nonzero(finite))
    nonfinite = _nonfinite_stats(flat_a, flat_r, shape)

    base = {
        "count": count,
        "finite_count": finite_count,
        "allclose_fail_count": fail_count,
        "allclose_fail_fraction": fail_count / count if count else 0.0,
        "nonfinite": nonfinite,
        "atol": atol,
        "rtol": rtol,
        "rel_floor": rel_floor,
        "fmt": f.name,
    }
    if finite_count == 0:
        undefined = dict.fromkeys(
            (
                "max_abs",
                "mean_abs",
                "rmse",
                "max_rel",
                "mean_rel",
                "ulp_p50",
                "ulp_p99",
                "ulp_max",
                "bits_min",
                "bits_median",
                "worst_index",
                "worst_actual",
                "worst_reference",
                "worst_rel_index",
            )
        )
        return ErrorStats(**base, **undefined)

    positions = np.flatnonzero(finite)
    fa, fr, d = flat_a[positions], flat_r[positions], diff_all[positions]
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        rel = d / np.maximum(np.abs(fr), rel_floor)
        ulps = d / ulp(fr, f)  # division by a power of two: exact unless it overflows
        bits = np.clip(-np.log2(rel), 0.0, _MAX_BITS)  # rel == 0 gives +inf, clipped to 53

    worst = int(np.argmax(d))
    worst_rel = int(np.argmax(rel))
    return ErrorStats(
        **base,
        max_abs=float(d[worst]),
        mean_abs=_scaled_mean(d, 1),
        rmse=_scaled_mean(d, 2),
        max_rel=float(rel[worst_rel]),
        mean_rel=_scaled_mean(rel, 1),
        ulp_p50=_quantile(ulps, 0.5),
        ulp_p99=_quantile(ulps, 0.99),
        ulp_max=float(np.max(ulps)),
        bits_min=float(np.min(bits)),
        bits_median=_quantile(bits, 0.5),
        worst_index=_unravel(positions[worst], shape),
        worst_actual=float(fa[worst]),
        worst_reference=float(fr[worst]),
        worst_rel_index=_unravel(positions[worst_rel], shape),
    )


def format_mismatch(stats: ErrorStats) -> str:
    """Return a one-line message in the style of torch.testing's tensor mismatch message.

    E.g. "Mismatched elements: 2 / 3 (66.7%) · Greatest absolute difference: 2.0 at index (1,)
    (up to 1e-04 allowed) · Greatest relative difference: 0.5 at index (1,) (up to 1e-04 allowed)",
    followed by the non-finite record when NaN or inf occur.
    """
    pct = 100.0 * stats.allclose_fail_fraction
    parts = [f"Mismatched elements: {stats.allclose_fail_count} / {stats.count} ({pct:.1f}%)"]
    if stats.worst_index is None:
        parts.append("No element where both values are finite")
    else:
        parts.append(
            f"Greatest absolute difference: {_num(stats.max_abs)} at index {stats.worst_index} "
            f"(up to {_tol(stats.atol)} allowed)"
        )
        parts.append(
            f"Greatest relative difference: {_num(stats.max_rel)} at index {stats.worst_rel_index} "
            f"(up to {_tol(stats.rtol)} allowed)"
        )
    nf = stats.nonfinite
    if nf.nan_actual or nf.nan_reference or nf.inf_actual or nf.inf_reference:
        text = (
            f"NaN: {nf.nan_actual} actual / {nf.nan_reference} reference, "
            f"inf: {nf.inf_actual} actual / {nf.inf_reference} reference, "
            f"non-finite mismatches: {nf.mismatched_nonfinite}"
        )
        if nf.examples:
            text += f" (first at index {nf.examples[0]})"
        parts.append(text)
    return " · ".join(parts)


# --- validation and conversion at the public boundary ------------------------------------------


def _check_tolerance(name: str, value: Any) -> float:
    v = _as_real(name, value)
    if not (math.isfinite(v) and v >= 0):
        raise ParameterError(f"Got {name}={value!r}, but {name} must be a finite number >= 0.")
    return v


def _check_rel_floor(value: Any) -> float:
    if value is None:
        return _DEFAULT_REL_FLOOR
    v = _as_real("rel_floor", value)
    if not (math.isfinite(v) and v > 0):
        raise ParameterError(
            f"Got rel_floor={value!r}, but rel_floor must be a finite number > 0 "
            "(or None for the fp32 smallest normal 2^-126)."
        )
    return v


def _as_real(name: str, value: Any) -> float:
    if isinstance(value, bool):
        raise ParameterError(f"Got {name}={value!r}, but {name} must be a real number, not a bool.")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"Got {name}={value!r}, but {name} must be a real number.") from None


def _to_float64(name: str, x: Any) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        if not x.is_floating_point():
            raise DtypeError(
                f"{name} has dtype {x.dtype}, but error_stats accepts only real floating dtypes "
                "(float16, bfloat16, float32, float64)."
            )
        return x.detach().to(device="cpu", dtype=torch.float64).numpy()
    arr = np.asarray(x)
    if arr.dtype.kind != "f":
        raise DtypeError(
            f"{name} has dtype {arr.dtype}, but error_stats accepts only real floating dtypes "
            "(float16, float32, float64)."
        )
    return arr.astype(np.float64, copy=False)


# --- computation helpers -------------------------------------------------------------------------


def _nonfinite_stats(a: np.ndarray, r: np.ndarray, shape: tuple[int, ...]) -> NonfiniteStats:
    """Count NaN / inf in each array and find where their non-finite patterns differ."""

    # Class per element: 0 finite, 1 NaN, 2 +inf, 3 -inf; a mismatch is a difference of class
    # at a position where at least one side is non-finite.
    def classify(x: np.ndarray) -> np.ndarray:
        c = np.zeros(x.shape, dtype=np.int8)
        c[np.isnan(x)] = 1
        c[np.isposinf(x)] = 2
        c[np.isneginf(x)] = 3
        return c

    ca, cr = classify(a), classify(r)
    mismatched = np.flatnonzero(ca != cr)
    return NonfiniteStats(
        nan_actual=int(np.count_nonzero(ca == 1)),
        nan_reference=int(np.count_nonzero(cr == 1)),
        inf_actual=int(np.count_nonzero(ca >= 2)),
        inf_reference=int(np.count_nonzero(cr >= 2)),
        mismatched_nonfinite=int(mismatched.size),
        examples=tuple(_unravel(i, shape) for i in mismatched[:_MAX_NONFINITE_EXAMPLES]),
    )


def _scaled_mean(x: np.ndarray, power: int) -> float:
    """Return mean(x) (power 1) or sqrt(mean(x²)) (power 2) of x ≥ 0, scaled to avoid overflow."""
    m = float(np.max(x))
    if m == 0 or not math.isfinite(m):
        return m
    return m * float(np.mean(x / m)) if power == 1 else m * math.sqrt(float(np.mean((x / m) ** 2)))


def _quantile(x: np.ndarray, q: float) -> float:
    """Return the q-quantile of x by linear interpolation (numpy's default), keeping inf as inf.

    ``np.quantile`` returns NaN when it interpolates next to an inf; here the upper neighbour being
    inf gives inf.
    """
    s = np.sort(x)
    pos = q * (s.size - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    if lo == hi or math.isinf(s[hi]):
        return float(s[hi])
    return float(s[lo] + (s[hi] - s[lo]) * (pos - lo))


def _unravel(flat_index: Any, shape: tuple[int, ...]) -> Index:
    return tuple(int(i) for i in np.unravel_index(int(flat_index), shape))


def _json_safe(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# --- message formatting --------------------------------------------------------------------------


def _num(x: float | None) -> str:
    """Format a statistic with 4 significant digits, keeping a trailing '.0' on integral values."""
    if x is None:
        return "n/a"
    s = f"{x:.4g}"
    return s + ".0" if s.lstrip("-").isdigit() else s


def _tol(x: float) -> str:
    """Format a tolerance as torch's message does for the usual ones: 1e-04, 1.3e-06, 0."""
    return "0" if x == 0 else np.format_float_scientific(x, trim="-", exp_digits=2)
