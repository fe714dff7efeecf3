"""Where an op's fp32 result is exact whatever order a kernel computes it in: no rounding error for the floor to give.

The floor (``interpose.Noise``) moves every op's result by a rounding error of fp32's size. That is the right
allowance where the result rounds, and too wide where it does not: a sum of values that are all multiples of one
power of two g, with Σ|x| ≤ 2^24·g, has every partial sum, in any order, an integer multiple of g below 2^24·g, so
representable in fp32 — the sum is exact (Higham 2002, §4.2: the error bound's terms are the roundings of the
partial sums, each zero when the partial sum is representable; Sterbenz-style exactness of fp addition, §2.1). A
matrix product of such operands is exact on the same condition with g the product of the operands' grids (each
product of two 24-bit significands fits 48 bits of fp64; below 2^24·g it fits fp32's 24 too). An addition,
subtraction or multiplication of fp32 values is exact where its fp64 result is representable in fp32: fp64 holds it
exactly (the product of two 24-bit significands, the sum of two fp32 values within 29 binades) or, where it does not,
no fp32 rounding differs from it by more than fp64's.

Such data is not rare: masks, one-hot targets, counts, integer-valued inputs, and the engine's own inputs of few
significant bits (``fp_analysis.explain.exact_inputs``), on which every legitimate order of a parameter-free Model's
sums gives the same bits and the floor shrinks to the rounding of the ops that are not exact — so a small bug is no
longer inside an accumulation order's allowance. Division, square root, means and every transcendental op stay
rounded: their implementations (an approximate reciprocal, ``__fdividef``, a running mean that divides at every
term as Welford's does) differ by ulps even where the true result is representable.

``exact_results`` gives, for one op of the fp64 evaluation at the floor's centre, the outputs whose fp32 result is
exact; ``interpose.Noise.exact`` carries them to the noise runs of the same evaluation, where those outputs carry no
error of their own (an operand's error from upstream still passes through them, to first order).
"""

from __future__ import annotations

import math

import torch

from ..numerics.rounding import round_to
from .conv64 import run_op
from .graph import LINEAR_OPS, multiplied

__all__ = ["exact_results", "on_magnitudes", "significant_bits"]

# Rounded once, to the nearest, by every implementation; and x ** 2, which PyTorch computes as x · x (where the
# squaring is fast-math's __powf, the engine's fast-math hypothesis does not take it as exact: ``interpose``).
_ELEMENTWISE = frozenset({"add", "sub", "mul", "rsub"})
_SUMS = frozenset({"sum", "nansum", "cumsum"})
_SIGNIFICAND = 24  # fp32's significand bits


def exact_results(
    func,
    name: str,
    args,
    kwargs: dict,
    out,
    scale=None,
    rounds: tuple[str, str] | None = None,
    *,
    means: bool = False,
) -> torch.Tensor | None:
    """The outputs of ``func(*args, **kwargs)`` = ``out`` (computed in fp64 on fp32 values) that fp32 computes
    exactly in any order (module docstring), as a bool tensor of ``out``'s shape; None where there are none, or the
    op is not one of those exactness is shown for. A linear op: ``scale``, its Σ|w·x| (or what gives it, called only
    where the operands' grids do not rule exactness out first); ``rounds``, the format its multiplied operands are
    rounded to and its ties (as ``interpose.Arithmetic.linear_rounding``), which must leave them as they are.
    A mean is never exact (a running mean, Welford's, divides at every term, as PyTorch's own norms do); with
    ``means``, the outputs whose sum is: every order of its sum agrees, so only the division is left."""
    if not isinstance(out, torch.Tensor) or not out.is_floating_point() or out.dtype != torch.float64:
        return None
    name = name.rstrip("_")
    if func in LINEAR_OPS:
        mask = _linear(func, args, kwargs, scale, rounds)
    elif name in _SUMS or (means and name == "mean"):
        mask = _sum(func, name, args, kwargs, out)
    elif name in _ELEMENTWISE or (name == "pow" and len(args) == 2 and not isinstance(args[1], torch.Tensor)
                                  and args[1] == 2):  # fmt: skip
        mask = _elementwise(args, kwargs, out)
    else:
        return None
    if mask is None or mask.shape != out.shape or not bool(mask.any()):
        return None
    return mask


def _elementwise(args, kwargs: dict, out: torch.Tensor) -> torch.Tensor | None:
    if kwargs.get("alpha", 1) != 1 or not _representable(_sample(out)).any():  # the sample: a quick "none"
        return None
    if not all(_on_fp32_grid(a) for a in args):
        return None
    return _representable(out)


def _sum(func, name: str, args, kwargs: dict, out: torch.Tensor) -> torch.Tensor | None:
    """A sum's exact outputs (a mean's: those whose sum is)."""
    terms = args[0] if args else None
    if not isinstance(terms, torch.Tensor) or not terms.is_floating_point() or not terms.numel():
        return None  # a count of a bool mask, or nothing
    if significant_bits(_sample(terms)) > _SIGNIFICAND:
        return None  # the sample alone needs more bits than a sum of it keeps: not worth the full look
    count = terms.numel() // max(1, out.numel())
    total = on_magnitudes(func, args, kwargs)  # Σ|x| over each output's terms (a mean: its mean)
    total = total * count if name == "mean" else total
    if _beyond_every_output(total, [terms]) or not _on_fp32_grid(terms):
        return None
    grid = _grid_exponent(terms)
    return total <= math.ldexp(1.0, _SIGNIFICAND + grid) if grid is not None else None


def _linear(func, args, kwargs: dict, scale, rounds: tuple[str, str] | None) -> torch.Tensor | None:
    if any(v != 1 for k, v in kwargs.items() if k in ("alpha", "beta")):
        return None
    pair = first, second = tuple(args[p] for p in multiplied(func))
    if sum(significant_bits(_sample(t)) for t in pair) > _SIGNIFICAND:
        return None  # the samples' products alone need more bits than fp32 keeps: not worth the full look
    if scale is None:
        scale = on_magnitudes(func, args, kwargs)
    scale = scale() if callable(scale) else scale
    if _beyond_every_output(scale, pair):
        return None
    floating = [a for a in args if isinstance(a, torch.Tensor) and a.is_floating_point()]
    if not all(_on_fp32_grid(a) for a in floating):
        return None
    if rounds is not None and not all(torch.equal(round_to(t.float(), *rounds).to(t.dtype), t) for t in pair):
        return None  # the format rounds them: the products are of other operands
    grids = [_grid_exponent(first), _grid_exponent(second)]
    if None in grids:
        return None
    grid = grids[0] + grids[1]  # the products' grid
    for added in floating:  # a bias, or addmm's added matrix: a term of its own
        if added is not first and added is not second:
            own = _grid_exponent(added)
            grid = min(grid, own) if own is not None else grid
    return scale <= math.ldexp(1.0, _SIGNIFICAND + grid)


_SAMPLE = 4096  # the values a quick look takes: a tensor's first


def _sample(t: torch.Tensor) -> torch.Tensor:
    return t.reshape(-1)[:_SAMPLE]


def _beyond_every_output(total: torch.Tensor, multiplied: list) -> bool:
    """Whether even the least Σ|terms| exceeds 2^24 steps of the grid the factors' samples have: the whole
    tensors' grid is no coarser than their samples', so then no output is exact (and the full look is spared)."""
    grids = [_grid_exponent(_sample(t)) for t in multiplied]
    if None in grids or not total.numel():
        return False
    return float(total.min()) > math.ldexp(1.0, _SIGNIFICAND + sum(grids))


def _representable(values: torch.Tensor) -> torch.Tensor:
    return torch.isfinite(values) & (values.to(torch.float32).to(values.dtype) == values)


def _on_fp32_grid(value) -> bool:
    """Whether ``value`` (a tensor, a Python number, or anything else an op takes) holds only finite values that fp32
    represents exactly; a non-numeric argument (a dim, a shape) does not count against it."""
    if isinstance(value, torch.Tensor):
        if not value.is_floating_point():
            return True
        return bool(torch.isfinite(value).all()) and bool((value.to(torch.float32).to(value.dtype) == value).all())
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return True
    return math.isfinite(value) and float(torch.tensor(value, dtype=torch.float32)) == value


def _grid_exponent(values: torch.Tensor) -> int | None:
    """e such that every value is an integer multiple of 2^e (the largest such e), for values on fp32's grid; None
    where every value is zero (no grid binds them)."""
    nonzero = values[values != 0]
    if not nonzero.numel():
        return None
    significand, exponent = torch.frexp(nonzero.to(torch.float64))
    whole = (significand.abs() * (1 << _SIGNIFICAND)).to(torch.int64)  # exact: at most 24 significant bits
    lowest = torch.log2((whole & -whole).to(torch.float64)).to(torch.int64)  # the lowest set bit
    return int((lowest + exponent.to(torch.int64)).min()) - _SIGNIFICAND


def significant_bits(values: torch.Tensor) -> int:
    """The significant bits ``values`` need on their common grid: ⌊log2 max|x|⌋ + 1 − the grid's exponent (0 for
    none but zeros; more than fp32's 24 for values fp32 does not represent)."""
    if not _on_fp32_grid(values):
        return 2 * _SIGNIFICAND
    grid = _grid_exponent(values)
    if grid is None:
        return 0
    top = math.frexp(float(values.abs().max()))[1]  # max|x| < 2^top
    return top - grid


def on_magnitudes(func, args, kwargs: dict):
    """The op on the magnitudes of its operands — Σ|w·x| of a linear op, Σ|x| of a sum — with addmm/baddbmm's alpha
    and beta as magnitudes too (Σ|w·x| must not cancel), and never into the Model's own ``out=`` buffer (its
    functional overload instead)."""
    if "out" in kwargs:
        func = func.overloadpacket
    named = {k: abs(v) if isinstance(v, (int, float)) else v for k, v in kwargs.items() if k != "out"}
    magnitudes = tuple(a.abs() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args)
    return run_op(func, magnitudes, named)
