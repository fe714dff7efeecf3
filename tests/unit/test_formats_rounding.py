"""Format identities and bit-exact rounding against the rational reference in tests/exact.py."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from fp_analysis.errors import DtypeError, ParameterError
from fp_analysis.numerics.formats import FORMATS, get_format
from fp_analysis.numerics.rounding import Rounding, flush_subnormals, round_to
from tests.exact import round_float, same_bits

NARROW = ("tf32", "bf16", "fp16")
MODES = ("rne", "rna", "rz")


@pytest.mark.parametrize("name", list(FORMATS))
def test_format_identities(name):
    f = FORMATS[name]
    assert f.eps == 2.0 ** (1 - f.precision)
    assert f.unit_roundoff == f.eps / 2
    assert f.smallest_normal == 2.0**f.emin
    assert f.smallest_subnormal == 2.0 ** (f.emin - f.precision + 1)
    assert f.max_finite == (2 - f.eps) * 2.0**f.emax
    # The largest finite value is one quantum below the next binade, which no longer fits.
    quantum = Fraction(2) ** (f.emax - f.precision + 1)
    assert Fraction(f.max_finite) + quantum == Fraction(2) ** (f.emax + 1)


@pytest.mark.parametrize("name", ["fp32", "fp16"])
def test_table_matches_numpy_finfo(name):
    info = np.finfo({"fp32": np.float32, "fp16": np.float16}[name])
    f = FORMATS[name]
    assert (f.eps, f.max_finite, f.smallest_normal) == (float(info.eps), float(info.max), float(info.tiny))
    assert f.smallest_subnormal == float(info.smallest_subnormal)


@pytest.mark.parametrize("name", NARROW)
def test_extremes_round_trip_and_overflow(name):
    f = FORMATS[name]
    values = np.array([f.max_finite, -f.max_finite, f.smallest_subnormal, f.smallest_normal], np.float32)
    assert np.array_equal(round_to(values, name), values)
    quantum = 2.0 ** (f.emax - f.precision + 1)
    tie_above_max = np.array([f.max_finite + quantum / 2], np.float64)  # the overflow threshold
    assert round_to(tie_above_max, name, "rne")[0] == math.inf  # tie to the even 2^(emax+1): overflow
    assert round_to(tie_above_max, name, "rna")[0] == math.inf
    assert round_to(tie_above_max, name, "rz")[0] == f.max_finite
    half_subnormal = np.array([f.smallest_subnormal / 2, -f.smallest_subnormal / 2], np.float64)
    assert [math.copysign(1, v) for v in round_to(half_subnormal, name, "rne")] == [1, -1]
    assert np.all(round_to(half_subnormal, name, "rne") == 0)  # tie to the even 0
    assert np.all(np.abs(round_to(half_subnormal, name, "rna")) == f.smallest_subnormal)


def _random_fp32_bits(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)


def _ties(name: str, n: int, seed: int) -> np.ndarray:
    """Exact midpoints between neighbours of format ``name``, normal and subnormal, as fp32 values."""
    rng = np.random.default_rng(seed)
    f = FORMATS[name]
    exponents = rng.integers(f.quantum_exponent_min, f.emax - f.precision + 1, n)
    significands = rng.integers(0, 2**f.precision, n)  # covers subnormal multiples of the quantum too
    lower = significands * np.exp2(exponents.astype(np.float64))
    lower = np.where(lower <= f.max_finite, lower, f.max_finite)
    quantum = np.exp2(np.maximum(np.floor(np.log2(np.maximum(lower, f.smallest_normal))), f.emin) - f.precision + 1)
    ties = (lower + quantum / 2) * rng.choice([-1.0, 1.0], n)
    return ties.astype(np.float32)


def _check_against_reference(values: np.ndarray, name: str, mode: str) -> None:
    got = round_to(values, name, mode)
    assert got.dtype == values.dtype
    for x, y in zip(values.tolist(), got.tolist(), strict=True):
        want = round_float(x, name, mode)
        assert same_bits(y, want) if values.dtype == np.float32 else (y == want or math.isnan(want)), (
            x,
            y,
            want,
        )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", NARROW)
def test_round_to_bit_exact_on_random_patterns_and_ties(name, mode):
    ties = _ties(name, 3000, seed=1)
    exact_ties = sum(round_float(float(t), name, "rna") != round_float(float(t), name, "rz") for t in ties)
    assert exact_ties > 2500  # the construction really produces midpoints
    values = np.concatenate([_random_fp32_bits(4000, seed=2), ties])
    _check_against_reference(values, name, mode)


@pytest.mark.parametrize("mode", MODES)
def test_round_float64_to_fp32_bit_exact(mode):
    rng = np.random.default_rng(3)
    bits = rng.integers(0, 2**64, 4000, dtype=np.uint64).view(np.float64)
    with np.errstate(invalid="ignore"):  # signalling-NaN patterns raise 'invalid' when widened
        f32 = _random_fp32_bits(2000, seed=4).astype(np.float64)
        ties = f32 + np.spacing(f32.astype(np.float32)).astype(np.float64) / 2
    _check_against_reference(np.concatenate([bits, f32, ties]), "fp32", mode)


@given(st.floats(width=32))
@example(-0.0)
@example(float.fromhex("0x1p-149"))
@example(float(np.float32(1 + 2**-11)))  # TF32 tie: to even gives 1.0
@example(float(np.float32(1 + 3 * 2**-11)))  # TF32 tie: to even gives 1 + 2^-9
@example(math.nan)
@example(-math.inf)
def test_round_to_scalar_cases(x):
    value = np.array([x], np.float32)
    for name in NARROW:
        for mode in MODES:
            assert same_bits(round_to(value, name, mode)[0], round_float(x, name, mode))


def test_tf32_nearest_even_matches_the_h100_measurement():
    """Tensor cores: 1 + 2^-11 → 1.0 and 1 + 3·2^-11 → 1 + 2^-9 (shared/facts, h100_seed_probe.json)."""
    x = np.array([1 + 2**-11, 1 + 3 * 2**-11], np.float32)
    assert round_to(x, "tf32").tolist() == [1.0, 1 + 2**-9]


@pytest.mark.parametrize(("name", "dtype"), [("bf16", torch.bfloat16), ("fp16", torch.float16)])
def test_rne_agrees_with_torch_conversion(name, dtype):
    values = torch.from_numpy(np.concatenate([_random_fp32_bits(200_000, seed=5), _ties(name, 20_000, seed=6)]))
    ours = round_to(values, name)
    theirs = values.to(dtype).to(torch.float32)
    assert isinstance(ours, torch.Tensor) and ours.dtype == torch.float32
    assert torch.equal(ours.isnan(), theirs.isnan())
    finite = ~theirs.isnan()
    assert torch.equal(ours[finite].view(torch.int32), theirs[finite].view(torch.int32))


def test_types_and_dtypes_are_kept():
    assert round_to(np.ones(3, np.float64), "bf16").dtype == np.float64
    assert round_to(torch.ones(2, dtype=torch.float64), "tf32").dtype == torch.float64
    assert isinstance(round_to(np.float32(1.5), "fp16"), np.floating)
    x = np.array([1.1, -2.2], np.float32)
    assert np.array_equal(round_to(x, "fp32"), x)


def test_bad_arguments_are_named():
    x = np.ones(2, np.float32)
    with pytest.raises(ParameterError, match="fmt='fp8'"):
        round_to(x, "fp8")
    with pytest.raises(ParameterError, match="round_to only rounds to"):
        round_to(x, "fp64")
    with pytest.raises(ParameterError, match=r"rounding='up'.*'rne', 'rna', 'rz'"):
        round_to(x, "tf32", "up")
    with pytest.raises(DtypeError, match="dtype int64"):
        round_to(np.ones(2, np.int64), "tf32")
    with pytest.raises(DtypeError, match="list"):
        round_to([1.0], "tf32")
    with pytest.raises(DtypeError, match="float16"):
        round_to(torch.ones(2, dtype=torch.float16), "tf32")
    with pytest.raises(ParameterError, match="fmt=3"):
        get_format(3)


def test_flush_subnormals_keeps_sign_and_normals():
    tiny = FORMATS["fp32"].smallest_normal
    x = np.array([tiny, tiny / 2, -tiny / 4, -0.0, 1.0], np.float32)
    got = flush_subnormals(x)
    assert got.tolist() == [tiny, 0.0, 0.0, 0.0, 1.0]
    assert np.signbit(got).tolist() == [False, False, True, True, False]


def _specials() -> np.ndarray:
    """±0, ±inf, NaNs with payloads and signs, the largest finite, the subnormal extremes, as fp32."""
    bits = [0x0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00001, 0xFFBFFFFF, 0x7F800001, 0x7F7FFFFF, 0xFF7FFFFF,
            0x00000001, 0x807FFFFF, 0x00800000]  # fmt: skip
    return np.array(bits, np.uint32).view(np.float32)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ("fp32", *NARROW))
def test_rounding_on_the_device_gives_the_numpy_paths_bits(name, mode, device):
    """The GPU path (``_round_on_device``; run on the CPU too, where round_to itself uses numpy) gives the bits of
    the numpy paths the rational reference holds (above): NaN payloads, overflow, ties and subnormals included,
    on a non-contiguous view; where it does not round (fp16 other than to nearest even) it says so."""
    from fp_analysis.numerics.rounding import _round_on_device

    values = np.concatenate([_random_fp32_bits(60_000, seed=7), _ties(name if name != "fp32" else "tf32", 6000, 8),
                             _specials()])  # fmt: skip
    grid = torch.from_numpy(values).reshape(-1, 2).to(device).t()  # a transposed, non-contiguous view
    got = _round_on_device(grid, get_format(name), Rounding(mode))
    if name == "fp16" and mode != "rne":
        assert got is None
        return
    want = round_to(np.ascontiguousarray(grid.cpu().numpy()), name, mode)
    assert got.device == grid.device and got.dtype == torch.float32 and got.shape == grid.shape
    assert np.array_equal(got.cpu().numpy().view(np.uint32), want.view(np.uint32))
    if device == "cuda":  # and round_to takes that path for a GPU tensor
        assert np.array_equal(round_to(grid, name, mode).cpu().numpy().view(np.uint32), want.view(np.uint32))
