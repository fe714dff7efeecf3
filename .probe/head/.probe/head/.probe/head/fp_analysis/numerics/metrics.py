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
import warnings
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import torch

from ..errors import DtypeError, ParameterError, ShapeError
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
    spacing is that same constant. e is read from ``frexp`` (|x| = m·2^k with 1/2 ≤ m < 1, so
    e = k - 1), never from ``log2``, whose rounding misplaces values just below a power of two.
    x need not be a number of ``fmt`` (a float64 reference is measured in fp32 ULPs); above the
    format's largest finite number the formula is extrapolated (emax is not applied). Returns NaN
    where x is NaN or ±inf.
    """
    result = _ulp_of(torch.from_numpy(np.array(x, dtype=np.float64)), get_format(fmt)).numpy()
    return result if result.ndim else result[()]  # a scalar in, a scalar out


def _ulp_of(x: torch.Tensor, f: FloatFormat) -> torch.Tensor:
    """``ulp`` of a float64 tensor, on its device (the formula and its source: ``ulp``'s docstring)."""
    x = x.abs()
    _, k = torch.frexp(x)
    e = torch.where(x == 0, f.emin, k.to(torch.int64) - 1)  # frexp(0) gives k=0, which is not e
    spacing = torch.exp2((torch.clamp(e, min=f.emin) - f.precision + 1).to(torch.float64))  # exact: a power of 2
    return torch.where(torch.isfinite(x), spacing, torch.nan)


# Elements compared per pass: float64 temporaries of 32 MB each, whatever the output's size (the full-size
# seed-000 output has 134 M elements: its whole-array temporaries took 17 GB).
_CHUNK = 1 << 22


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

    Inputs are numpy arrays or torch tensors of a floating dtype, on any device. Every element is
    evaluated in float64, in passes of ``_CHUNK`` elements, on the inputs' GPU where both are on the same
    one and on the CPU otherwise. Shapes must be equal: broadcasting is deliberately not allowed, since a
    broadcast reference silently compares the wrong elements.

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
      Quantiles interpolate linearly between order statistics (numpy's and torch's default method);
      the order statistics are selected, not sorted for (the same values, in linear time).
    - ``bits_min``, ``bits_median``: correct bits -log2(relative error) (Higham 2002, §1.2: a relative
      error of 2^-k means about k correct significant bits), with the same guarded relative error,
      clipped to [0, 53]; exact agreement counts as 53, float64's precision. The bits decrease as the
      relative error grows, so they are read off the relative error's order statistics.
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

    The means are summed per pass (each scaled by its largest value) and the passes' sums added exactly
    (``math.fsum``): equal to a whole-array mean to within float64 rounding, not bitwise.

    Memory: the inputs as given, two float64 values per finite pair (the relative and the ULP error, kept
    for the order statistics) and one pass's temporaries.

    Raises ``ShapeError`` when the shapes differ, ``DtypeError`` for a non-floating input, and
    ``ParameterError`` when atol or rtol is negative or not finite, rel_floor is not a positive
    finite number, or fmt is not one of "fp64", "fp32", "tf32", "bf16", "fp16".
    """
    atol = _check_tolerance("atol", atol)
    rtol = _check_tolerance("rtol", rtol)
    rel_floor = _check_rel_floor(rel_floor)
    f = get_format(fmt)
    a, r, shape = _flat_pair(actual, reference)
    passes = _Passes(a, r, atol, rtol, rel_floor, f)
    finite = _finite_statistics(passes, shape) if passes.finite else dict.fromkeys(_FINITE_ONLY)
    return ErrorStats(
        count=passes.count,
        finite_count=passes.finite,
        allclose_fail_count=passes.fails,
        allclose_fail_fraction=passes.fails / passes.count if passes.count else 0.0,
        nonfinite=passes.nonfinite(shape),
        atol=atol,
        rtol=rtol,
        rel_floor=rel_floor,
        fmt=f.name,
        **finite,
    )


# The statistics defined only over finite pairs: None where there is none.
_FINITE_ONLY = (
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


def _flat_pair(actual: Any, reference: Any) -> tuple[torch.Tensor, torch.Tensor, tuple[int, ...]]:
    """Return (actual, reference, their shape): both as flat tensors on one device, the inputs' GPU where both are
    on the same one and the CPU otherwise. ``DtypeError`` for a non-floating input, ``ShapeError`` where the shapes
    differ."""
    a = _as_tensor("actual", actual)
    r = _as_tensor("reference", reference)
    if a.shape != r.shape:
        raise ShapeError(
            f"actual has shape {tuple(a.shape)} but reference has shape {tuple(r.shape)}; "
            "error_stats compares element by element and does not broadcast."
        )
    device = a.device if a.device == r.device else torch.device("cpu")
    return a.reshape(-1).to(device), r.reshape(-1).to(device), tuple(a.shape)


def _finite_statistics(passes: _Passes, shape: tuple[int, ...]) -> dict[str, Any]:
    """Return the statistics over the finite pairs (``_FINITE_ONLY``, by name) of a walk that found at least one
    (definitions: ``error_stats``). Reorders the kept relative and ULP errors."""
    rel, ulps = passes.kept()
    n = passes.finite
    ulp_p50, ulp_p99 = _quantiles(ulps, (0.5, 0.99))
    # bits = clip(-log2(rel)) falls as rel grows: the j-th smallest bits is the j-th largest rel's
    pos, lo, hi = _neighbours(0.5, n)
    bits_lo, bits_hi = _bits(_order_statistics(rel, [n - 1 - lo, n - 1 - hi]))
    return {
        "max_abs": passes.worst_abs,
        "mean_abs": passes.mean("abs"),
        "rmse": passes.mean("abs", 2),
        "max_rel": passes.worst_rel,
        "mean_rel": passes.mean("rel"),
        "ulp_p50": ulp_p50,
        "ulp_p99": ulp_p99,
        "ulp_max": passes.ulp_max,
        "bits_min": _bits([passes.worst_rel])[0],
        "bits_median": _interpolate(bits_lo, bits_hi, pos, lo, hi),
        "worst_index": _unravel(passes.worst_abs_at, shape),
        "worst_actual": passes.worst_actual,
        "worst_reference": passes.worst_reference,
        "worst_rel_index": _unravel(passes.worst_rel_at, shape),
    }


class _Passes:
    """One walk over a flattened (actual, reference) pair, ``_CHUNK`` elements at a time in float64: the counts
    over all elements (allclose failures, non-finite values), and for the finite pairs d, the relative and
    the ULP error (kept whole, in the order of the elements, for the means and the order statistics) with
    where each maximum first occurs. The definitions are ``error_stats``'s."""

    def __init__(self, a: torch.Tensor, r: torch.Tensor, atol: float, rtol: float, rel_floor: float, f):
        self.count = a.numel()
        self._atol, self._rtol, self._rel_floor, self._format = atol, rtol, rel_floor, f
        self.fails = self.finite = 0
        self.nan_actual = self.nan_reference = self.inf_actual = self.inf_reference = self.mismatched = 0
        self.examples: list[int] = []
        self.worst_abs = self.worst_rel = self.ulp_max = -math.inf
        self.worst_abs_at = self.worst_rel_at = 0
        self.worst_actual = self.worst_reference = 0.0
        self._kept = [torch.empty(self.count, dtype=torch.float64, device=a.device) for _ in range(2)]
        # per pass, of d and of the relative error: (its largest value m, Σ x/m, Σ (x/m)²)
        self._sums: dict[str, list[tuple[float, float, float]]] = {"abs": [], "rel": []}
        for start in range(0, self.count, _CHUNK):
            stop = start + _CHUNK
            self._pass(a[start:stop].to(torch.float64), r[start:stop].to(torch.float64), start)

    def _pass(self, ca: torch.Tensor, cr: torch.Tensor, start: int) -> None:
        """Add one pass (float64 elements from flat index ``start``) to the counts, the kept errors and the maxima."""
        diff = (ca - cr).abs()
        close = (ca == cr) | (torch.isfinite(diff) & (diff <= self._atol + self._rtol * cr.abs()))
        self.fails += int(close.numel() - torch.count_nonzero(close))
        finite = torch.isfinite(ca) & torch.isfinite(cr)
        positions = None
        if not bool(finite.all()):
            self._count_nonfinite(ca, cr, start)
            positions = torch.nonzero(finite).reshape(-1)
            ca, cr, diff = ca[positions], cr[positions], diff[positions]
        rel = diff / torch.clamp(cr.abs(), min=self._rel_floor)
        ulps = diff / _ulp_of(cr, self._format)  # division by a power of two: exact unless it overflows
        size = diff.numel()
        if size == 0:
            return
        for kept, values in zip(self._kept, (rel, ulps), strict=True):
            kept[self.finite : self.finite + size] = values
        self._sums["abs"].append(_scaled_sums(diff))
        self._sums["rel"].append(_scaled_sums(rel))
        self.finite += size
        self.ulp_max = max(self.ulp_max, float(ulps.max()))

        def at(i: int) -> int:  # the element's flat index in the whole array
            return start + (int(positions[i]) if positions is not None else i)

        i = int(torch.argmax(diff))  # the first of equal maxima (torch.argmax), as a later pass must beat it
        if float(diff[i]) > self.worst_abs:
            self.worst_abs, self.worst_abs_at = float(diff[i]), at(i)
            self.worst_actual, self.worst_reference = float(ca[i]), float(cr[i])
        i = int(torch.argmax(rel))
        if float(rel[i]) > self.worst_rel:
            self.worst_rel, self.worst_rel_at = float(rel[i]), at(i)

    def _count_nonfinite(self, ca: torch.Tensor, cr: torch.Tensor, start: int) -> None:
        """NaN / inf counts, and the positions whose class differs (0 finite, 1 NaN, 2 +inf, 3 -inf) where at
        least one side is non-finite."""

        def classify(x: torch.Tensor) -> torch.Tensor:
            c = torch.zeros(x.shape, dtype=torch.int8, device=x.device)
            c[torch.isnan(x)] = 1
            c[torch.isposinf(x)] = 2
            c[torch.isneginf(x)] = 3
            return c

        cls_a, cls_r = classify(ca), classify(cr)
        self.nan_actual += int(torch.count_nonzero(cls_a == 1))
        self.nan_reference += int(torch.count_nonzero(cls_r == 1))
        self.inf_actual += int(torch.count_nonzero(cls_a >= 2))
        self.inf_reference += int(torch.count_nonzero(cls_r >= 2))
        mismatched = torch.nonzero(cls_a != cls_r).reshape(-1)
        self.mismatched += mismatched.numel()
        room = _MAX_NONFINITE_EXAMPLES - len(self.examples)
        self.examples += [start + int(i) for i in mismatched[:room]]

    def nonfinite(self, shape: tuple[int, ...]) -> NonfiniteStats:
        """Return the non-finite record, its example positions in ``shape``."""
        return NonfiniteStats(
            nan_actual=self.nan_actual,
            nan_reference=self.nan_reference,
            inf_actual=self.inf_actual,
            inf_reference=self.inf_reference,
            mismatched_nonfinite=self.mismatched,
            examples=tuple(_unravel(i, shape) for i in self.examples),
        )

    def kept(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The relative and the ULP errors of the finite pairs, in element order."""
        rel, ulps = (kept[: self.finite] for kept in self._kept)
        return rel, ulps

    def mean(self, of: str, power: int = 1) -> float:
        """mean(x) (power 1) or sqrt(mean(x²)) (power 2) of d (``of="abs"``) or the relative error ("rel"),
        from the passes' sums rescaled to the largest value of all (no overflow where x does not overflow)."""
        top = self.worst_abs if of == "abs" else self.worst_rel
        if top == 0 or not math.isfinite(top):
            return top
        if power == 1:
            return top * (math.fsum(m / top * s for m, s, _ in self._sums[of]) / self.finite)
        return top * math.sqrt(math.fsum((m / top) ** 2 * s2 for m, _, s2 in self._sums[of]) / self.finite)


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
    """Return ``value`` as a float; ParameterError unless it is a finite number >= 0."""
    v = _as_real(name, value)
    if not (math.isfinite(v) and v >= 0):
        raise ParameterError(f"Got {name}={value!r}, but {name} must be a finite number >= 0.")
    return v


def _check_rel_floor(value: Any) -> float:
    """Return ``value`` as a float (None: the fp32 smallest normal); ParameterError unless it is finite and > 0."""
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
    """Return ``float(value)``; ParameterError for a bool or what is not a real number."""
    if isinstance(value, bool):
        raise ParameterError(f"Got {name}={value!r}, but {name} must be a real number, not a bool.")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"Got {name}={value!r}, but {name} must be a real number.") from None


def _as_tensor(name: str, x: Any) -> torch.Tensor:
    """``x`` as a tensor of a floating dtype, where it is (a numpy array is viewed, not copied, where torch can)."""
    if isinstance(x, torch.Tensor):
        if not x.is_floating_point():
            raise DtypeError(
                f"{name} has dtype {x.dtype}, but error_stats accepts only real floating dtypes "
                "(float16, bfloat16, float32, float64)."
            )
        return x.detach()
    arr = np.asarray(x)
    if arr.dtype.kind != "f":
        raise DtypeError(
            f"{name} has dtype {arr.dtype}, but error_stats accepts only real floating dtypes "
            "(float16, float32, float64)."
        )
    if arr.dtype.itemsize > 8:  # long double: torch has none; float64 is what every statistic is evaluated in
        arr = arr.astype(np.float64)
    arr = arr.astype(arr.dtype.newbyteorder("="), order="C", copy=False)
    with warnings.catch_warnings():  # a read-only array: torch warns that it may not be written; nothing writes it
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(arr)


# --- computation helpers -------------------------------------------------------------------------


def _scaled_sums(d: torch.Tensor) -> tuple[float, float, float]:
    """(m, Σ d/m, Σ (d/m)²) of one pass's d ≥ 0, m its largest (1 where all are 0 or m is not finite)."""
    m = float(d.max())
    if m == 0 or not math.isfinite(m):
        return m, 0.0, 0.0
    scaled = d / m
    return m, float(scaled.sum()), float((scaled * scaled).sum())


def _neighbours(q: float, n: int) -> tuple[float, int, int]:
    """(position, lower, upper) order statistics a q-quantile of n values interpolates between."""
    pos = q * (n - 1)
    return pos, math.floor(pos), math.ceil(pos)


def _interpolate(low: float, high: float, pos: float, lo: int, hi: int) -> float:
    """Linear interpolation between neighbouring order statistics (numpy's default quantile method),
    keeping inf as inf: ``np.quantile`` returns NaN when it interpolates next to an inf."""
    if lo == hi or math.isinf(high):
        return high
    return low + (high - low) * (pos - lo)


def _order_statistics(x: torch.Tensor, ks: list[int]) -> list[float]:
    """The k-th smallest values of x (0-based) for each k of ``ks``, selected in linear time on the CPU
    (reordering x in place) and by a sort on a GPU."""
    if x.device.type == "cpu":
        v = x.numpy()
        v.partition(sorted(set(ks)))
        return [float(v[k]) for k in ks]
    ordered = torch.sort(x).values
    return [float(ordered[k]) for k in ks]


def _quantiles(x: torch.Tensor, qs: tuple[float, ...]) -> list[float]:
    """The q-quantiles of x (``_interpolate``'s method), x reordered on the CPU: read it before."""
    where = [_neighbours(q, x.numel()) for q in qs]
    values = _order_statistics(x, [k for _, lo, hi in where for k in (lo, hi)])
    return [_interpolate(values[2 * i], values[2 * i + 1], *where[i]) for i in range(len(qs))]


def _bits(rel: list[float]) -> list[float]:
    """Correct bits of relative errors: -log2(rel) clipped to [0, 53] (``error_stats``)."""
    with np.errstate(divide="ignore"):
        # + 0.0: -log2(1) is -0.0, and a count of bits has no sign
        return [float(b) + 0.0 for b in np.clip(-np.log2(np.asarray(rel, dtype=np.float64)), 0.0, _MAX_BITS)]


def _unravel(flat_index: Any, shape: tuple[int, ...]) -> Index:
    """Return the position in ``shape`` of a flat (C order) index, as a tuple of ints."""
    return tuple(int(i) for i in np.unravel_index(int(flat_index), shape))


def _json_safe(value: Any) -> Any:
    """Return ``value`` with tuples as lists and non-finite floats as None."""
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
