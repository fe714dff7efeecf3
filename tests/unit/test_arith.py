"""fma32 / mul32 / add32 bit for bit against exact rational arithmetic, on adversarial families."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from fp_analysis.errors import DtypeError, ShapeError
from fp_analysis.numerics.arith import add32, fma32, mul32
from fp_analysis.numerics.fma_emulation import fma32_emulated, fma_chain
from tests.exact import flush, fma_reference, round_fraction, same_bits

F32 = np.float32
TINY = float.fromhex("0x1p-126")
SPECIALS = [
    0.0,
    -0.0,
    math.inf,
    -math.inf,
    math.nan,
    1.0,
    -1.0,
    float.fromhex("0x1p-149"),
    -float.fromhex("0x1p-149"),
    TINY,
    float.fromhex("0x1.fffffep+127"),
    -float.fromhex("0x1p-127"),
]


def _scaled(rng, n, lo, hi):
    """Random fp32 values sign·m·2^e with e uniform in [lo, hi) and a full 24-bit significand."""
    m = rng.integers(2**23, 2**24, n) / 2.0**23
    return (rng.choice([-1.0, 1.0], n) * m * np.exp2(rng.integers(lo, hi, n))).astype(F32)


def _near_midpoints(rng, n):
    """a·b+c that land on, or within a few ulps of fp64 of, an fp32 rounding midpoint.

    Exact ties: a = ±2^i and b = ±(2k+1)·ulp(c)/(2a), so a·b is an odd multiple of half an ulp of c.
    Near ties: the same target divided by an a with a full significand, b rounded to fp32 — the product
    misses the midpoint by far less than an fp32 ulp, which is where rounding the fp64 sum first goes wrong.
    """
    c = _scaled(rng, n, -20, 20)
    half_ulp = np.spacing(np.abs(c)).astype(np.float64) / 2
    target = (2 * rng.integers(0, 2000, n) + 1) * half_ulp * rng.choice([-1.0, 1.0], n)
    exact_a = np.exp2(rng.integers(-8, 8, n)).astype(F32)
    near_a = _scaled(rng, n, -8, 8)
    a = np.where(rng.random(n) < 0.5, exact_a, near_a)
    b = (target / a.astype(np.float64)).astype(F32)
    nudge = rng.integers(-1, 2, n)
    b = np.where(a == exact_a, b, np.nextafter(b, np.where(nudge > 0, np.inf, -np.inf)).astype(F32))
    return a, b, c


def _double_rounding_traps(rng, n):
    """a·b = ±ulp(c)/2 · (1 − j²·2^-46): a hair off the midpoint next to c, closer than fp64 can see.

    With a = 1 + j·2^-23 and b = ±(1 − j·2^-23)·ulp(c)/2 the fp64 sum c + a·b rounds exactly onto the
    fp32 midpoint (for j² < 2^17), so rounding that fp64 sum to fp32 again breaks the tie to even —
    the wrong way whenever c's last bit is odd. A single rounding must not.
    """
    c = _scaled(rng, n, -30, 30)
    j = rng.integers(1, 300, n).astype(np.float64)
    half_ulp = np.spacing(np.abs(c)).astype(np.float64) / 2
    a = (1 + j * 2.0**-23).astype(F32)
    b = (rng.choice([-1.0, 1.0], n) * (1 - j * 2.0**-23) * half_ulp).astype(F32)
    return a, b, c


def _families(seed=0):
    rng = np.random.default_rng(seed)
    bits = lambda n: rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(F32)  # noqa: E731
    grid = np.array(list(itertools.product(SPECIALS, repeat=3)), F32).T
    yield "special grid", grid[0], grid[1], grid[2]
    yield "random bit patterns", bits(20_000), bits(20_000), bits(20_000)
    yield (
        "moderate",
        _scaled(rng, 20_000, -30, 30),
        _scaled(rng, 20_000, -30, 30),
        _scaled(rng, 20_000, -60, 60),
    )
    yield "near midpoints", *_near_midpoints(rng, 30_000)
    yield "double-rounding traps", *_double_rounding_traps(rng, 10_000)
    # Products around 2^-150..2^-110 with tiny addends: subnormal results, underflow to ±0.
    yield (
        "subnormal results",
        _scaled(rng, 10_000, -80, -55),
        _scaled(rng, 10_000, -75, -55),
        np.where(rng.random(10_000) < 0.5, _scaled(rng, 10_000, -149, -126), np.float32(-0.0)).astype(F32),
    )
    # Products around 2^127..2^129 with huge addends: overflow and the rounding to max_finite.
    yield (
        "overflow",
        _scaled(rng, 10_000, 63, 65),
        _scaled(rng, 10_000, 63, 65),
        _scaled(rng, 10_000, 120, 128),
    )
    # Exact cancellation: c = -a·b when representable gives ±0 by IEEE's sign rule.
    a, b = _scaled(rng, 2_000, -10, 10), np.exp2(rng.integers(-5, 5, 2_000)).astype(F32)
    yield "cancellation", a, b, (-(a * b)).astype(F32)


def _assert_matches(got, a, b, c, reference) -> list[float]:
    """Assert ``got`` equals ``reference`` bitwise for every case; return the reference values."""
    want = [reference(x, y, z) for x, y, z in zip(a.tolist(), b.tolist(), c.tolist(), strict=True)]
    bad = [
        case
        for case in zip(a.tolist(), b.tolist(), c.tolist(), got.tolist(), want, strict=True)
        if not same_bits(case[3], case[4])
    ]
    assert not bad, f"{len(bad)} mismatches, e.g. (a, b, c, got, want) = {bad[:3]}"
    return want


def _is_tie(x: float, y: float, z: float) -> bool:
    """Whether the exact a·b+c lies exactly halfway between two neighbouring finite fp32 values."""
    exact = Fraction(x) * Fraction(y) + Fraction(z)
    if exact == 0:
        return False
    down, away = round_fraction(exact, "fp32", "rz"), round_fraction(exact, "fp32", "rna")
    return math.isfinite(away) and down != away and 2 * exact == Fraction(down) + Fraction(away)


@pytest.mark.long
def test_fma32_bit_exact_on_100k_adversarial_cases():
    """Both fmas: numba's (LLVM's fma) and the float64 numpy emulation rounded to odd (``fma_emulation``)."""
    total, ties, double_rounding_traps = 0, 0, 0
    for name, a, b, c in _families():
        want = _assert_matches(fma32(a, b, c), a, b, c, fma_reference)
        emulated = fma32_emulated(a, b, c).tolist()
        bad = [case for case in zip(a.tolist(), b.tolist(), c.tolist(), emulated, want, strict=True)
               if not same_bits(case[3], case[4])]  # fmt: skip
        assert not bad, f"emulated: {len(bad)} mismatches in {name}, e.g. (a, b, c, got, want) = {bad[:3]}"
        total += a.size
        with np.errstate(all="ignore"):
            naive = (a.astype(np.float64) * b + c).astype(F32)  # the fp64 sum rounded again: two roundings
        double_rounding_traps += sum(not same_bits(n, w) for n, w in zip(naive.tolist(), want, strict=True))
        if name == "near midpoints":
            ties += sum(map(_is_tie, a.tolist(), b.tolist(), c.tolist()))
    assert total >= 100_000
    # The families must really contain what they claim, or passing proves little.
    assert ties > 5_000, ties
    assert double_rounding_traps > 100, double_rounding_traps


def test_fma32_ftz_bit_exact():
    def reference(x, y, z):
        return flush(fma_reference(flush(x), flush(y), flush(z)))

    for _name, a, b, c in _families(seed=1):
        a, b, c = a[:5000], b[:5000], c[:5000]
        _assert_matches(fma32(a, b, c, ftz=True), a, b, c, reference)


@pytest.mark.parametrize("ftz", [False, True])
def test_mul32_add32_bit_exact(ftz):
    f = flush if ftz else (lambda v: v)
    for _name, a, b, c in _families(seed=2):
        a, b, c = a[:3000], b[:3000], c[:3000]
        _assert_matches(
            mul32(a, b, ftz=ftz),
            a,
            b,
            c,
            lambda x, y, z: f(fma_reference(f(x), f(y), 0.0) if f(x) * f(y) != 0 else f(x) * f(y)),
        )
        _assert_matches(add32(a, c, ftz=ftz), a, b, c, lambda x, y, z: f(fma_reference(f(x), 1.0, f(z))))


def test_separate_rounding_differs_from_fused():
    a, b = np.float32(1 + 2**-23), np.float32(1 - 2**-23)
    fused = fma32(a, b, np.float32(-1.0))
    separate = add32(mul32(a, b), np.float32(-1.0))
    assert fused == np.float32(-(2.0**-46)) and separate == 0.0


def test_broadcasting_and_dtype_errors():
    out = fma32(np.ones((3, 1), F32), np.ones((1, 4), F32), np.float32(1.0))
    assert out.shape == (3, 4) and out.dtype == F32
    with pytest.raises(DtypeError, match="b with dtype float64"):
        fma32(np.ones(2, F32), np.ones(2), np.ones(2, F32))


def test_the_emulated_fma_rounds_to_odd_before_it_rounds_to_fp32():
    """(1 + 2^-12)² = 1 + 2^-11 + 2^-24: an fp32 midpoint; 2^-80 more or less decides it, but the float64 sum
    cannot hold the 2^-80, so without rounding to odd both would round to even (1 + 2^-11)."""
    a = np.full(2, 1 + 2**-12, F32)
    got = fma32_emulated(a, a, np.array([2.0**-80, -(2.0**-80)], F32))
    assert got.tolist() == [1 + 2**-11 + 2**-23, 1 + 2**-11]


def test_the_emulated_chain_is_the_numba_sequential_fma_chain():
    """``fma_chain`` gives ``accumulate``'s default spec bit for bit (with and without a starting value), on terms
    whose partial sums cancel, underflow and overflow."""
    from fp_analysis.numerics.orders import AccumulationSpec, accumulate

    rng = np.random.default_rng(5)
    bits = rng.integers(0, 2**32, (300, 40), dtype=np.uint64).astype(np.uint32).view(F32)
    w = np.concatenate([_scaled(rng, 300 * 40, -20, 20).reshape(300, 40), bits, bits[:, ::-1]])
    x = np.concatenate([_scaled(rng, 300 * 40, -20, 20).reshape(300, 40), bits[::-1], bits])
    init = _scaled(rng, 900, -10, 10)
    for start in (None, init):
        want = accumulate(w, x, AccumulationSpec(), start)
        got = fma_chain(w, x, start)
        assert all(map(same_bits, got.tolist(), want.tolist()))


def test_the_emulated_fma_and_chain_take_float32_terms_only():
    with pytest.raises(DtypeError, match="b with dtype float64"):
        fma32_emulated(np.ones(2, F32), np.ones(2), np.ones(2, F32))
    with pytest.raises(DtypeError, match="w with dtype float64"):
        fma_chain(np.ones((2, 3)), np.ones((2, 3), F32))
    with pytest.raises(ShapeError, match=r"init of shape \(1,\).*shape \(2,\)"):
        fma_chain(np.ones((2, 3), F32), np.ones((2, 3), F32), np.ones(1, F32))
    with pytest.raises(ShapeError, match="two \\(M, K\\) arrays"):
        fma_chain(np.ones((2, 3), F32), np.ones((3, 2), F32))
