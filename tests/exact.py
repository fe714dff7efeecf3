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
    """floor(log2(a)) for a positive Fraction, by exact comparison: with n and d of b_n and b_d bits, a lies in
    (2^(b_n−b_d−1), 2^(b_n−b_d+1)), so the answer is b_n − b_d or one less."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    return e if _at_least_power(a.numerator, a.denominator, e) else e - 1


def _at_least_power(n: int, d: int, e: int) -> bool:
    """n/d ≥ 2^e, in integers."""
    return n >= d << e if e >= 0 else n << -e >= d


def round_fraction(q: Fraction, fmt: str, mode: str) -> float:
    """The value of format ``fmt`` that rounding the exact nonzero rational ``q`` gives, as a Python float.

    The rational a = |q| as n/d, its quantum 2^k (k: the exponent of a's binade, not below emin, less the precision's
    fraction bits): a/2^k = N/D in integers, its integer part m and remainder r = N − m·D; r/D against 1/2 is 2r
    against D. The result m·2^k is below 2^(precision+1)·2^k, exact in a float unless it overflows."""
    f = FORMATS[fmt]
    negative = q < 0
    a = -q if negative else q
    k = max(floor_log2(a), f.emin) - (f.precision - 1)
    n, d = (a.numerator, a.denominator << k) if k >= 0 else (a.numerator << -k, a.denominator)
    m, r = divmod(n, d)
    if (mode == "rne" and (2 * r > d or (2 * r == d and m % 2 == 1))) or (mode == "rna" and 2 * r >= d):
        m += 1
    if m * Fraction(2) ** k > Fraction(f.max_finite):
        result = f.max_finite if mode == "rz" else math.inf
    else:
        result = math.ldexp(m, k)
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
