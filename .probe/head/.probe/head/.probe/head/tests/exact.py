"""Exact rational reference for the rounding and fp32 arithmetic tests (pure Python, slow, obviously right).

Rounding follows IEEE 754-2019 §4.3 directly on ``fractions.Fraction`` values; it shares no code with
the library it checks.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from fp_analysis.numerics.formats import FORMATS


def floor_log2(a: Fraction) -> int:
    """floor(log2(a)) for a positive Fraction, by exact comparison."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    return e


def round_fraction(q: Fraction, fmt: str, mode: str) -> float:
    """The value of format ``fmt`` that rounding the exact nonzero rational ``q`` gives, as a Python float."""
    f = FORMATS[fmt]
    negative = q < 0
    a = -q if negative else q
    quantum_exp = max(floor_log2(a), f.emin) - (f.precision - 1)
    scaled = a / Fraction(2) ** quantum_exp
    n = scaled.numerator // scaled.denominator
    rem = scaled - n
    if mode == "rne" and (rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1)):
        n += 1
    elif mode == "rna" and rem >= Fraction(1, 2):
        n += 1
    value = Fraction(n) * Fraction(2) ** quantum_exp
    if value > Fraction(f.max_finite):
        value = f.max_finite if mode == "rz" else math.inf
    result = float(value)
    return -result if negative else result


def round_float(x: float, fmt: str, mode: str) -> float:
    """``round_fraction`` extended to ±0, ±inf and NaN (returned as they are)."""
    if x == 0 or not math.isfinite(x):
        return x
    return round_fraction(Fraction(x), fmt, mode)


def fma_reference(a: float, b: float, c: float) -> float:
    """RNE of the exact a·b+c in fp32 (IEEE 754-2019 §5.4.1), for fp32 values given as floats."""
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        # Infinities and NaN: double arithmetic follows the same IEEE rules, and a·b is exact in double.
        return float(np.float32(a * b + c))
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        return a * b + c  # the double sum carries IEEE's sign rule for exact zeros (§6.3)
    rounded = round_fraction(exact, "fp32", "rne")
    return rounded if rounded != 0 else math.copysign(0.0, float(exact))


def flush(x: float) -> float:
    """CUDA -ftz=true: fp32 subnormals become zeros of the same sign."""
    return math.copysign(0.0, x) if abs(x) < FORMATS["fp32"].smallest_normal else x


def same_bits(x, y) -> bool:
    """Bitwise equality of two fp32 values, any NaN equal to any NaN."""
    x32, y32 = np.float32(x), np.float32(y)
    if np.isnan(x32) or np.isnan(y32):
        return bool(np.isnan(x32) and np.isnan(y32))
    return x32.view(np.uint32) == y32.view(np.uint32)
