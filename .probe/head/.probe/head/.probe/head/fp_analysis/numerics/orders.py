"""Named accumulation orders: many length-K fp32 dot products emulated exactly, at once.

A kernel that computes y = b + Σ_k w_k·x_k in fp32 makes three choices the result depends on bit
for bit: the order in which the K products are added, whether multiply and add are fused (FMA), and
whether the operands are first rounded to a narrower format (TF32 / bf16 / fp16 on tensor cores).
``AccumulationSpec`` names those choices; ``accumulate`` computes exactly what a kernel following the
spec produces, using the exact fp32 operations of ``fp_analysis.numerics.arith``. The CUDA variants take the
same spec as their definition, so the CPU result is the kernel's twin.

Conventions every order shares (the CUDA kernels follow them too):

- Terms come as (M, K) arrays, one row per output; ``perm`` (default: identity) is the order in which
  the K index is visited. ``init`` (the bias, if any) is the starting value of the accumulator of the
  first block; other blocks start at +0. So a split into one block, or a tree with a leaf ≥ K, is the
  sequential order exactly.
- Blocks are contiguous runs of the visited order: ``block`` terms each (TREE) or ``ceil(K/splits)``
  terms each (SPLIT_K; trailing blocks may be short or empty).
- A tree combine adds adjacent pairs level by level, (p0+p1), (p2+p3), …, an odd last partial moving
  up unchanged — a balanced binary tree of depth ⌈log2 B⌉ over B partials.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

import numpy as np
from numba import njit

from ..errors import DtypeError, ParameterError, ShapeError, enum_member
from .arith import add_rn, fma_rn, ftz, mul_rn
from .rounding import Rounding, round_to

__all__ = ["AccumulationSpec", "Combine", "Contraction", "OperandRounding", "Order", "accumulate"]


class Order(str, Enum):
    """How the K products of one output are summed."""

    SEQUENTIAL = "sequential"
    """One fp32 accumulator, terms added one by one in the visited order (``perm``)."""
    REVERSE = "reverse"
    """As SEQUENTIAL, visiting ``perm`` backwards."""
    TREE = "tree"
    """Blocks of ``block`` terms summed sequentially, block sums combined by a pairwise tree."""
    SPLIT_K = "split_k"
    """``splits`` contiguous partial sums, each sequential, combined as ``combine`` says."""
    KAHAN = "kahan"
    """Kahan-compensated fp32 summation (Kahan 1965, CACM 8(1):40), sequential in ``perm``."""
    FP64 = "fp64"
    """An fp64 accumulator, sequential in ``perm``, rounded once to fp32 (nearest even) at the end."""


class Contraction(str, Enum):
    """Whether a product and the add that consumes it are fused."""

    FMA = "fma"
    """acc ← fmaf(w, x, acc): one rounding per term (nvcc's default, ``-fmad=true``)."""
    SEPARATE = "separate"
    """acc ← acc + (w·x) with the product rounded first: two roundings (``-fmad=false``, __fmul_rn)."""


class Combine(str, Enum):
    """How partial sums are added together (SPLIT_K)."""

    TREE = "tree"
    """Adjacent pairs, level by level: depth ⌈log2 B⌉."""
    SEQUENTIAL = "sequential"
    """((p0 + p1) + p2) + …: depth B − 1."""


class OperandRounding(str, Enum):
    """Rounding applied to both operands before they are multiplied (the tensor-core input formats)."""

    NONE = "none"
    """fp32 operands as they are."""
    TF32 = "tf32"
    """TF32, nearest even: what H100 tensor cores do to fp32 inputs (shared/facts, h100_seed_probe)."""
    TF32_RNA = "tf32_rna"
    """TF32, nearest with ties away from zero (``cvt.rna.tf32.f32``)."""
    TF32_RZ = "tf32_rz"
    """TF32 by truncation: dropping the 13 low fraction bits."""
    BF16 = "bf16"
    """bfloat16, nearest even."""
    FP16 = "fp16"
    """IEEE half, nearest even (may overflow beyond 65504 or underflow below 2^-24)."""

    @property
    def format_and_rounding(self) -> tuple[str, Rounding] | None:
        """(format name, rounding) for ``round_to``, or None when operands are left alone."""
        return _OPERAND_ROUNDING[self]


_OPERAND_ROUNDING = {
    OperandRounding.NONE: None,
    OperandRounding.TF32: ("tf32", Rounding.RNE),
    OperandRounding.TF32_RNA: ("tf32", Rounding.RNA),
    OperandRounding.TF32_RZ: ("tf32", Rounding.RZ),
    OperandRounding.BF16: ("bf16", Rounding.RNE),
    OperandRounding.FP16: ("fp16", Rounding.RNE),
}


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ParameterError(f"Got {name}={value!r}, but {name} must be an integer >= 1.")
    return int(value)


@dataclass(frozen=True)
class AccumulationSpec:
    """The arithmetic of one dot-product variant: order, contraction, operand rounding, flush-to-zero.

    ``block`` is used by TREE only and ``splits``/``combine`` by SPLIT_K only. Strings are accepted for
    the enums and converted, so a spec can be written ``AccumulationSpec("split_k", splits=8)``.
    """

    order: Order = Order.SEQUENTIAL
    contraction: Contraction = Contraction.FMA
    operand_rounding: OperandRounding = OperandRounding.NONE
    ftz: bool = False
    block: int = 32
    splits: int = 4
    combine: Combine = Combine.TREE

    def __post_init__(self):
        object.__setattr__(self, "order", enum_member(Order, self.order, "order"))
        object.__setattr__(self, "contraction", enum_member(Contraction, self.contraction, "contraction"))
        rounding = enum_member(OperandRounding, self.operand_rounding, "operand_rounding")
        object.__setattr__(self, "operand_rounding", rounding)
        object.__setattr__(self, "combine", enum_member(Combine, self.combine, "combine"))
        object.__setattr__(self, "block", _positive_int(self.block, "block"))
        object.__setattr__(self, "splits", _positive_int(self.splits, "splits"))
        if not isinstance(self.ftz, (bool, np.bool_)):
            raise ParameterError(f"Got ftz={self.ftz!r}, but ftz must be True or False.")

    @classmethod
    def reduced_precision_reference(cls, operand_rounding: OperandRounding | str) -> AccumulationSpec:
        """What a tensor-core reference in a reduced precision computes, as the terms-level emulation of it:
        operands rounded (``OperandRounding.TF32`` is cuDNN's TF32 mode), the exact products summed in fp64
        from the bias, rounded to fp32 once. A tensor core's own additions differ from this by an fp32-sized
        accumulation error (shared/facts: cuDNN TF32 vs this emulation, 6.3e-6 on seed 000). The whole-Model
        form of the same idea is ``fp_analysis.model.interpose.precision_mode``."""
        return cls(Order.FP64, operand_rounding=operand_rounding)

    @property
    def label(self) -> str:
        """A short, stable name such as ``split_k8-tree/fma/tf32``: order, contraction, operands (+ftz)."""
        order = self.order.value
        if self.order is Order.TREE:
            order = f"tree{self.block}"
        elif self.order is Order.SPLIT_K:
            order = f"split_k{self.splits}-{self.combine.value}"
        parts = [order, self.contraction.value, self.operand_rounding.value]
        return "/".join(parts) + ("/ftz" if self.ftz else "")

    def blocks(self, k: int) -> int:
        """Number of blocks (partial sums) the order splits K terms into."""
        if self.order is Order.TREE:
            return math.ceil(k / self.block)
        if self.order is Order.SPLIT_K:
            return self.splits
        return 1


# ----------------------------------------------------------------------------------------------------
# Compiled loops over terms laid out (M, K) as gathered, visiting the K index as perm[lo:hi] says.
# Outputs are processed _ROWS at a time with the term loop outside, so each row is read sequentially
# and the independent accumulators hide the FMA latency; the order along K is exactly the spec's.

_ROWS = 16


@njit(cache=True)
def _chain(w, x, perm, lo, hi, acc, fused, flush):
    """acc[m] ← acc[m] ⊕ w[m, k]·x[m, k] for k = perm[lo], …, perm[hi−1], in place."""
    for m0 in range(0, w.shape[0], _ROWS):
        m1 = min(m0 + _ROWS, w.shape[0])
        for j in range(lo, hi):
            k = perm[j]
            if fused:
                for m in range(m0, m1):
                    acc[m] = fma_rn(w[m, k], x[m, k], acc[m], flush)
            else:
                for m in range(m0, m1):
                    acc[m] = add_rn(acc[m], mul_rn(w[m, k], x[m, k], flush), flush)


@njit(cache=True)
def _kahan(w, x, perm, total, fused, flush):
    """Kahan's compensated sum of the products into ``total``, in place.

    y = w·x − c (as fmaf(w, x, −c) when fused); t = s + y; c = (t − s) − y; s = t. A kernel must write
    the compensation with __fadd_rn so that fast-math cannot simplify c away.
    """
    comp = np.zeros_like(total)
    for m0 in range(0, w.shape[0], _ROWS):
        m1 = min(m0 + _ROWS, w.shape[0])
        for j in range(perm.shape[0]):
            k = perm[j]
            for m in range(m0, m1):
                if fused:
                    y = fma_rn(w[m, k], x[m, k], -comp[m], flush)
                else:
                    y = add_rn(mul_rn(w[m, k], x[m, k], flush), -comp[m], flush)
                t = add_rn(total[m], y, flush)
                comp[m] = add_rn(add_rn(t, -total[m], flush), -y, flush)
                total[m] = t


@njit(cache=True)
def _fp64_chain(w, x, perm, acc64, flush):
    """acc64[m] += double(w)·double(x), sequentially. The product of two fp32 is exact in fp64, so a
    fused fp64 multiply-add gives the same sums: contraction does not matter here."""
    for m0 in range(0, w.shape[0], _ROWS):
        m1 = min(m0 + _ROWS, w.shape[0])
        for j in range(perm.shape[0]):
            k = perm[j]
            for m in range(m0, m1):
                a, b = w[m, k], x[m, k]
                if flush:  # cvt.ftz.f64.f32 flushes subnormal fp32 operands on the way in
                    a, b = ftz(a), ftz(b)
                acc64[m] += np.float64(a) * np.float64(b)


@njit(cache=True)
def _round_fp64_to_fp32(acc64, flush):
    out = np.empty(acc64.shape, np.float32)
    for m in range(acc64.shape[0]):
        v = np.float32(acc64[m])  # IEEE conversion: round to nearest even
        out[m] = ftz(v) if flush else v
    return out


@njit(cache=True)
def _add_rows(a, b, flush):
    out = np.empty_like(a)
    for m in range(a.shape[0]):
        out[m] = add_rn(a[m], b[m], flush)
    return out


def _combine(partials: list[np.ndarray], how: Combine, flush: bool) -> np.ndarray:
    if how is Combine.SEQUENTIAL:
        total = partials[0]
        for p in partials[1:]:
            total = _add_rows(total, p, flush)
        return total
    level = partials
    while len(level) > 1:
        paired = [_add_rows(level[i], level[i + 1], flush) for i in range(0, len(level) - 1, 2)]
        level = paired + ([level[-1]] if len(level) % 2 else [])
    return level[0]


def _blocked(w, x, perm, start, size: int, count: int, spec: AccumulationSpec) -> np.ndarray:
    fused = spec.contraction is Contraction.FMA
    k = perm.shape[0]
    partials = []
    for b in range(count):
        acc = start.copy() if b == 0 else np.zeros_like(start)
        _chain(w, x, perm, min(b * size, k), min((b + 1) * size, k), acc, fused, spec.ftz)
        partials.append(acc)
    return _combine(partials, spec.combine if spec.order is Order.SPLIT_K else Combine.TREE, spec.ftz)


# ----------------------------------------------------------------------------------------------------


def _validated_terms(w, x, init, perm):
    for name, arr in (("w", w), ("x", x)):
        if not isinstance(arr, np.ndarray) or arr.dtype != np.float32:
            got = arr.dtype if isinstance(arr, np.ndarray) else type(arr).__name__
            raise DtypeError(f"Got {name} of {got}, but accumulate takes float32 numpy arrays of shape (M, K).")
        if arr.ndim != 2:
            raise ShapeError(f"{name} must have shape (M, K), got {arr.shape}")
    if w.shape != x.shape:
        raise ShapeError(f"w and x must have the same shape (M, K), got {w.shape} and {x.shape}")
    if w.shape[1] == 0:
        raise ShapeError("w and x have K = 0 terms; a dot product needs K >= 1")
    if init is not None:
        if not isinstance(init, np.ndarray) or init.dtype != np.float32 or init.shape != (w.shape[0],):
            desc = f"{init.dtype} array of shape {init.shape}" if isinstance(init, np.ndarray) else type(init)
            raise ShapeError(f"init must be None or a float32 array of shape ({w.shape[0]},), got {desc}")
    k = w.shape[1]
    if perm is None:
        return np.arange(k)
    perm = np.asarray(perm)
    if (
        perm.shape != (k,)
        or not np.issubdtype(perm.dtype, np.integer)
        or not np.array_equal(np.sort(perm), np.arange(k))
    ):
        raise ParameterError(f"perm must be a permutation of range(K) with K = {k}, got an array of shape {perm.shape}")
    return perm


def accumulate(
    w: np.ndarray, x: np.ndarray, spec: AccumulationSpec, init: np.ndarray | None = None, perm=None
) -> np.ndarray:
    """Return the fp32 results, shape (M,), of the M dot products init + Σ_k w[m,k]·x[m,k] under ``spec``.

    Bit for bit what a kernel following ``spec`` computes (see the module docstring for the shared
    conventions). ``w`` and ``x`` are float32 (M, K); ``init`` is None (start from +0) or float32 (M,);
    ``perm`` is the order in which the K index is visited (default 0, 1, …, K−1). Operand rounding
    applies to ``w`` and ``x`` only, never to ``init``.
    """
    if not isinstance(spec, AccumulationSpec):
        raise ParameterError(f"spec must be an AccumulationSpec, got {type(spec).__name__}")
    perm = _validated_terms(w, x, init, perm)
    if spec.order is Order.REVERSE:
        perm = perm[::-1]
    rounding = spec.operand_rounding.format_and_rounding
    if rounding is not None:
        w, x = round_to(w, *rounding), round_to(x, *rounding)
    perm = np.ascontiguousarray(perm, dtype=np.int64)
    w, x = np.ascontiguousarray(w), np.ascontiguousarray(x)
    start = np.zeros(w.shape[0], np.float32) if init is None else init.copy()
    fused = spec.contraction is Contraction.FMA
    with np.errstate(all="ignore"):
        if spec.order in (Order.SEQUENTIAL, Order.REVERSE):
            _chain(w, x, perm, 0, perm.shape[0], start, fused, spec.ftz)
            return start
        if spec.order is Order.KAHAN:
            _kahan(w, x, perm, start, fused, spec.ftz)
            return start
        if spec.order is Order.FP64:
            acc64 = start.astype(np.float64)
            _fp64_chain(w, x, perm, acc64, spec.ftz)
            return _round_fp64_to_fp32(acc64, spec.ftz)
        k = perm.shape[0]
        size = spec.block if spec.order is Order.TREE else math.ceil(k / spec.splits)
        return _blocked(w, x, perm, start, size, spec.blocks(k), spec)
