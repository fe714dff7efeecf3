"""The fp32 fused multiply-add in float64 numpy arithmetic: the fmaf chain without numba's start.

``numerics.arith`` computes ``fmaf`` with LLVM's fma intrinsic through numba, which costs a process most of a
second to load (numba, its CPU target, the cached functions) before the first result. An explanation on the CPU needs
the fmaf chain only for the twin evidence of a one-convolution Model (``engine.twin_evidence``: a few thousand
sampled outputs, two chains), where that load was most of the job's own time. So that chain is computed here,
vectorised over the outputs, with no compiled code.

Exactness (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to
odd", IEEE Trans. Computers 57(4), 2008: rounding to odd in a format at least 2 bits more precise, whose exponent
range covers the target's, then to nearest, is rounding to nearest once), for float32 a, b, c:

1. p = a·b in float64 is exact: 24 + 24 significand bits fit in 53, and |p| lies in [2^-298, 2^256], inside
   float64's normal range (or p is ±0);
2. s = RN64(p + c) and its error e = (p + c) − s exactly, by the TwoSum algorithm (Møller 1965; Knuth, TAOCP
   vol. 2, §4.2.2, Theorem B: exact for any two finite operands barring overflow, which cannot happen here);
3. rounding to odd: o = s where e = 0 or s's last significand bit is odd, else the float64 neighbour of s
   towards p + c (the other one of the two float64 numbers around it, whose last bit is then odd), so o is
   p + c rounded to odd in precision 53;
4. RN32(o), numpy's float64 → float32 conversion (to nearest even, with gradual underflow and overflow to ±inf),
   equals RN32(p + c) because 53 ≥ 24 + 2: the theorem's condition, also where the float32 result is subnormal
   (fewer bits kept) or overflows (the overflow threshold is a float32 midpoint, which rounding to odd never
   produces from an inexact sum).

Non-finite operands give float64's IEEE result (inf·0 and inf − inf are NaN), converted; a NaN's payload may
differ from the hardware fma's. The tests compare this with ``arith.fma32`` bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..errors import DtypeError, ShapeError

__all__ = ["float32_operand", "fma32_emulated", "fma_chain"]


def float32_operand(value, name: str) -> np.ndarray:
    """``value`` as a numpy array, or a DtypeError naming ``name`` unless it is float32: fp32 arithmetic (here and
    in ``fp_analysis.numerics.arith``) takes float32 operands only, never rounding wider ones silently."""
    array = np.asarray(value)
    if array.dtype != np.float32:
        raise DtypeError(
            f"Got {name} with dtype {array.dtype}, but fp32 arithmetic takes float32 arrays only "
            f"(convert with .astype(np.float32) if the rounding is intended)."
        )
    return array


def fma32_emulated(a, b, c) -> np.ndarray:
    """fmaf(a, b, c) elementwise for float32 arrays (broadcast), rounded once to nearest even; see the module
    docstring for why each step is exact."""
    a, b, c = float32_operand(a, "a"), float32_operand(b, "b"), float32_operand(c, "c")
    with np.errstate(all="ignore"):  # inf·0, inf − inf: NaN, as the fma gives
        p = np.multiply(a, b, dtype=np.float64)
        c64 = c.astype(np.float64)
        s = p + c64
        # TwoSum: the rounding error of s = p + c, exactly
        c_part = s - p
        p_part = s - c_part
        error = (p - p_part) + (c64 - c_part)
        inexact = (error != 0) & np.isfinite(error)
        even = (s.view(np.int64) & 1) == 0
        towards = np.where(error > 0, np.inf, -np.inf)
        odd = np.where(inexact & even, np.nextafter(s, towards), s)
        return odd.astype(np.float32)


def fma_chain(w: np.ndarray, x: np.ndarray, init: np.ndarray | None = None) -> np.ndarray:
    """acc ← fmaf(w[:, k], x[:, k], acc) for k = 0, …, K−1 from acc = ``init`` (or +0): the M sequential fp32
    fmaf dot products of float32 (M, K) terms, what ``orders.accumulate`` gives for the default
    ``AccumulationSpec()`` (sequential, fused, no operand rounding, no flush), without numba."""
    w, x = float32_operand(w, "w"), float32_operand(x, "x")
    if w.ndim != 2 or w.shape != x.shape:
        raise ShapeError(f"Got w of shape {w.shape} and x of shape {x.shape}, but the terms are two (M, K) arrays.")
    w, x = np.asfortranarray(w), np.asfortranarray(x)  # each column contiguous
    if init is not None and float32_operand(init, "init").shape != (w.shape[0],):
        m = w.shape[0]
        raise ShapeError(f"Got init of shape {np.shape(init)}, but it starts the M = {m} sums: shape ({m},).")
    acc = np.zeros(w.shape[0], np.float32) if init is None else np.array(init, np.float32)
    for k in range(w.shape[1]):
        acc = fma32_emulated(w[:, k], x[:, k], acc)
    return acc
