"""Tests of fp_analysis.numerics.metrics: each expected value is derived by formula in the test."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from fp_analysis.errors import DtypeError, ParameterError, ShapeError
from fp_analysis.numerics.formats import FORMATS
from fp_analysis.numerics.metrics import ErrorStats, error_stats, format_mismatch, ulp

FP32 = FORMATS["fp32"]
NAN, INF = math.nan, math.inf
TINY32 = FP32.smallest_subnormal  # 2^-149


# --- ulp ------------------------------------------------------------------------------------------


def test_ulp_hand_values_fp32():
    p, emin = FP32.precision, FP32.emin
    assert ulp(1.0)[()] == 2.0 ** (1 - p)  # 2^-23
    assert ulp(-1.0)[()] == 2.0 ** (1 - p)
    # Just below 2: same binade as 1; at 2: the next binade.
    assert ulp(np.nextafter(2.0, 0.0))[()] == 2.0 ** (1 - p)
    assert ulp(2.0)[()] == 2.0 ** (2 - p)
    assert ulp(0.0)[()] == FP32.smallest_subnormal
    assert ulp(-0.0)[()] == 2.0 ** (emin - p + 1)
    # Whole subnormal range (and the smallest normal) has the spacing of the smallest subnormal.
    for x in (TINY32, 3 * TINY32, FP32.smallest_normal / 2, FP32.smallest_normal):
        assert ulp(x)[()] == 2.0 ** (emin - p + 1) == 2.0**-149


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_ulp_of_one_and_zero_every_format(name):
    f = FORMATS[name]
    assert ulp(1.0, name)[()] == f.eps
    assert ulp(0.0, name)[()] == f.smallest_subnormal
    assert ulp(f.smallest_normal, name)[()] == f.smallest_subnormal


def test_ulp_nonfinite_is_nan():
    assert np.isnan(ulp(np.array([NAN, INF, -INF]))).all()


# numpy dtypes whose np.spacing gives the Goldberg ulp of a format's own numbers.
_NUMPY_FORMATS = {"fp64": np.float64, "fp32": np.float32, "fp16": np.float16}


@given(data=st.data(), name=st.sampled_from(sorted(_NUMPY_FORMATS)))
@example(data=None, name="fp32").via("powers of two and subnormals")
def test_ulp_matches_numpy_spacing(data, name):
    dtype = _NUMPY_FORMATS[name]
    finfo = np.finfo(dtype)
    if data is None:
        xs = np.array([0.0, 1.0, 2.0, 0.5, FORMATS[name].smallest_subnormal, finfo.tiny], dtype=dtype)
    else:
        width = {"fp64": 64, "fp32": 32, "fp16": 16}[name]
        xs = data.draw(hnp.arrays(dtype, 8, elements=st.floats(width=width, allow_nan=False, allow_infinity=False)))
        xs = xs[np.abs(xs) < finfo.max]  # spacing of the largest finite value is inf
    expected = np.spacing(np.abs(xs)).astype(np.float64)
    np.testing.assert_array_equal(ulp(xs, name), expected)


# --- basic statistics -----------------------------------------------------------------------------


def test_hand_checkable_statistics():
    r = np.array([1.0, 2.0, 4.0, 0.0])
    a = r + np.array([0.0, 2.0**-20, -(2.0**-10), 2.0**-149])
    s = error_stats(a, r)
    d = np.abs(a - r)
    rel = d / np.maximum(np.abs(r), FP32.smallest_normal)
    assert s.count == 4 and s.finite_count == 4
    assert s.max_abs == 2.0**-10
    assert s.mean_abs == pytest.approx(d.mean(), rel=1e-15)
    assert s.rmse == pytest.approx(math.sqrt(np.mean(d**2)), rel=1e-15)
    assert s.max_rel == pytest.approx(rel.max(), rel=1e-15)
    assert s.mean_rel == pytest.approx(rel.mean(), rel=1e-15)
    # ULP errors: 0; 2^-20 / 2^-22 = 4; 2^-10 / 2^-21 = 2^11; 2^-149 / 2^-149 = 1.
    ulps = np.array([0.0, 2.0**-20 / 2.0**-22, 2.0**-10 / 2.0**-21, 1.0])
    assert s.ulp_max == ulps.max()
    assert s.ulp_p50 == np.quantile(ulps, 0.5)
    assert s.ulp_p99 == pytest.approx(np.quantile(ulps, 0.99), rel=1e-15)
    # Correct bits: exact -> 53; 2^-20/2 -> 21; 2^-10/4 -> 12; 2^-149/2^-126 -> 23.
    bits = np.array([53.0, 21.0, 12.0, 23.0])
    assert s.bits_min == bits.min()
    assert s.bits_median == np.median(bits)
    assert s.worst_index == (2,)
    assert (s.worst_actual, s.worst_reference) == (a[2], r[2])
    assert s.worst_rel_index == (2,)  # rel errors 0, 2^-21, 2^-12, 2^-23
    assert s.fmt == "fp32" and s.rel_floor == FP32.smallest_normal


def test_worst_rel_index_apart_from_worst_abs():
    s = error_stats(np.array([101.0, 1e-3]), np.array([100.0, 0.0]), rel_floor=1e-4)
    assert s.worst_index == (0,) and s.worst_rel_index == (1,)
    assert s.max_rel == pytest.approx(1e-3 / 1e-4, rel=1e-15)


def test_identical_inputs_are_exact():
    x = np.linspace(-3, 3, 97, dtype=np.float32)
    s = error_stats(x, torch.from_numpy(x.copy()))
    assert s.max_abs == 0.0 and s.rmse == 0.0 and s.ulp_max == 0.0
    assert s.bits_min == 53.0 and s.bits_median == 53.0
    assert s.allclose_fail_count == 0 and s.allclose_fail_fraction == 0.0


def test_bits_clip_at_zero_for_large_relative_error():
    s = error_stats(np.array([10.0]), np.array([1.0]))
    assert s.bits_min == 0.0


def test_rel_floor_guards_zero_reference():
    s = error_stats(np.array([1e-3]), np.array([0.0]), rel_floor=1e-4)
    assert s.max_rel == pytest.approx(1e-3 / 1e-4, rel=1e-15)
    assert s.ulp_max == 1e-3 / FP32.smallest_subnormal


@pytest.mark.parametrize("shape", [(1,), (7,), (3, 5), (2, 3, 4), (1, 97, 1)])
def test_worst_index_is_position_of_largest_error(shape):
    rng = np.random.default_rng(sum(shape))
    r = rng.standard_normal(shape)
    a = r + 1e-6 * rng.standard_normal(shape)
    target = tuple(int(n) - 1 for n in shape)  # last element: a non-trivial unravel
    a[target] = r[target] + 1.0
    s = error_stats(a, r)
    assert s.worst_index == target
    assert s.worst_actual == a[target] and s.worst_reference == r[target]


def test_worst_index_first_occurrence_on_ties():
    s = error_stats(np.array([[0.0, 1.0], [1.0, 0.0]]), np.zeros((2, 2)))
    assert s.worst_index == (0, 1)


def test_zero_dim_and_empty_inputs():
    s = error_stats(np.float32(1.5), np.float64(1.0))
    assert s.count == 1 and s.worst_index == () and s.max_abs == 0.5
    e = error_stats(np.zeros((0, 3)), np.zeros((0, 3)))
    assert e.count == 0 and e.finite_count == 0 and e.max_abs is None and e.worst_index is None
    assert e.allclose_fail_fraction == 0.0
    json.dumps(e.to_dict(), allow_nan=False)


def test_torch_inputs_any_float_dtype():
    r = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    for dtype in (torch.float16, torch.bfloat16, torch.float32):
        a = r.to(dtype).requires_grad_(True)
        s = error_stats(a, r)
        assert s.max_abs == float((a.detach().double() - r).abs().max())


# --- allclose -------------------------------------------------------------------------------------


def test_allclose_hand_example():
    r = np.array([1.0, 2.0, 3.0])
    a = np.array([1.0, 4.0, 3.0 + 1e-5])
    s = error_stats(a, r, atol=1e-4, rtol=0.0)
    assert s.allclose_fail_count == 1
    assert s.allclose_fail_fraction == 1 / 3
    assert s.summary() == format_mismatch(s)
    assert s.summary().startswith(
        "Mismatched elements: 1 / 3 (33.3%) · Greatest absolute difference: 2.0 at index (1,) "
        "(up to 1e-04 allowed) · Greatest relative difference: 1.0 at index (1,) (up to 0 allowed)"
    )


def _awkward_floats32():
    return st.one_of(
        st.floats(width=32, allow_nan=True, allow_infinity=True, allow_subnormal=True),
        st.sampled_from([0.0, -0.0, NAN, INF, -INF, TINY32, -TINY32, FP32.smallest_normal, 1.0]),
    )


@st.composite
def _pairs(draw):
    """Draw (actual, reference) float32 arrays: reference awkward; actual near it or arbitrary."""
    n = draw(st.integers(1, 24))
    r = draw(hnp.arrays(np.float32, n, elements=_awkward_floats32()))
    noise = draw(hnp.arrays(np.float32, n, elements=st.floats(-(2.0**-10), 2.0**-10, width=32)))
    other = draw(hnp.arrays(np.float32, n, elements=_awkward_floats32()))
    near = draw(hnp.arrays(np.bool_, n))
    with np.errstate(all="ignore"):
        a = np.where(near, r + noise * np.abs(r) + noise * 1e-4, other).astype(np.float32)
    return a, r


_TOLS = st.one_of(st.sampled_from([0.0, 1e-5, 1e-4, 1e-2]), st.floats(0, 1))


@given(pair=_pairs(), atol=_TOLS, rtol=_TOLS)
@example(pair=(np.array([NAN], np.float32), np.array([NAN], np.float32)), atol=1e-4, rtol=1e-4)
@example(pair=(np.array([INF, -INF], np.float32), np.array([INF, INF], np.float32)), atol=1, rtol=1)
@example(pair=(np.array([INF, 1.0], np.float32), np.array([1.0, -INF], np.float32)), atol=0, rtol=0)
@example(pair=(np.array([-0.0, TINY32], np.float32), np.array([0.0, 0.0], np.float32)), atol=0, rtol=0)
@example(pair=(np.array([1.0 + 2**-10], np.float32), np.array([1.0], np.float32)), atol=0, rtol=2**-10)
def test_allclose_fail_count_matches_torch_isclose(pair, atol, rtol):
    a, r = pair
    s = error_stats(a, r, atol=atol, rtol=rtol)
    # torch evaluates in the tensors' dtype; the metric evaluates in float64, so compare there.
    ta, tr = torch.from_numpy(a.astype(np.float64)), torch.from_numpy(r.astype(np.float64))
    expected = int((~torch.isclose(ta, tr, rtol=rtol, atol=atol, equal_nan=False)).sum())
    assert s.allclose_fail_count == expected
    assert s.allclose_fail_fraction == expected / a.size
    assert (s.allclose_fail_count == 0) == torch.allclose(ta, tr, rtol=rtol, atol=atol)
    json.dumps(s.to_dict(), allow_nan=False)


# --- NaN / inf kept apart -------------------------------------------------------------------------


def test_nonfinite_positions_reported_apart():
    r = np.array([[1.0, NAN, INF], [2.0, -INF, NAN]])
    a = np.array([[1.5, 1.0, INF], [NAN, INF, NAN]])
    s = error_stats(a, r)
    nf = s.nonfinite
    assert (nf.nan_actual, nf.nan_reference) == (2, 2)
    assert (nf.inf_actual, nf.inf_reference) == (2, 2)
    # (0,1) NaN vs number, (1,0) number vs NaN, (1,1) -inf vs +inf; (0,2) and (1,2) agree in pattern.
    assert nf.mismatched_nonfinite == 3
    assert nf.examples == ((0, 1), (1, 0), (1, 1))
    assert s.finite_count == 1 and s.max_abs == 0.5 and s.worst_index == (0, 0)
    # allclose: (0,0) fails, (0,1), (1,0), (1,1), (1,2) fail (NaN never passes); +inf == +inf passes.
    assert s.allclose_fail_count == 5
    d = s.to_dict()
    assert d["nonfinite"]["examples"] == [[0, 1], [1, 0], [1, 1]]
    json.dumps(d, allow_nan=False)


def test_nonfinite_examples_capped_at_ten():
    s = error_stats(np.full(25, NAN), np.zeros(25))
    assert s.nonfinite.mismatched_nonfinite == 25
    assert s.nonfinite.examples == tuple((i,) for i in range(10))
    assert s.finite_count == 0 and s.max_abs is None and s.bits_min is None
    assert "No element where both values are finite" in s.summary()


_FINITE_FIELDS = ("max_abs", "mean_abs", "rmse", "max_rel", "mean_rel", "ulp_p50", "ulp_p99", "ulp_max")


@given(
    r=hnp.arrays(np.float32, st.integers(1, 16), elements=st.floats(-1e3, 1e3, width=32)),
    seed=st.integers(0, 2**16),
    junk=st.lists(st.sampled_from([NAN, INF, -INF]), min_size=1, max_size=6),
)
def test_finite_stats_unaffected_by_nonfinite(r, seed, junk):
    rng = np.random.default_rng(seed)
    a = (r + rng.standard_normal(r.size).astype(np.float32) * 1e-3).astype(np.float32)
    clean = error_stats(a, r)
    # Append non-finite values to one or both sides; the finite statistics must not move.
    extra_a = np.array(junk, np.float32)
    extra_r = np.where(rng.random(len(junk)) < 0.5, extra_a, np.float32(1.0)).astype(np.float32)
    dirty = error_stats(np.concatenate([a, extra_a]), np.concatenate([r, extra_r]))
    for name in (*_FINITE_FIELDS, "bits_min", "bits_median", "worst_index"):
        assert getattr(dirty, name) == getattr(clean, name), name
    assert dirty.finite_count == clean.finite_count == r.size


@given(
    a=hnp.arrays(
        np.float32, st.integers(1, 40), elements=st.floats(-8, 8, width=32) | st.sampled_from([NAN, INF, -INF])
    ),
    seed=st.integers(0, 2**16),
    chunk=st.integers(1, 9),
)
@example(a=np.array([np.nan], np.float32), seed=0, chunk=1)  # nothing finite: the means are None
def test_passes_of_any_size_give_the_whole_arrays_statistics_bitwise(a, seed, chunk):
    """error_stats walks the arrays in passes of ``_CHUNK`` elements (17 GB of whole-array temporaries at the
    seed-000 size before): any pass size gives the same record bitwise, maxima's first occurrences included, but
    the means, which are summed per pass."""
    import fp_analysis.numerics.metrics as metrics

    rng = np.random.default_rng(seed)
    r = np.where(rng.random(a.size) < 0.3, a, np.round(a + rng.standard_normal(a.size), 1)).astype(np.float32)
    whole = error_stats(a, r).to_dict()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(metrics, "_CHUNK", chunk)
        passes = error_stats(a, r).to_dict()
    for summed in ("mean_abs", "rmse", "mean_rel"):  # summed per pass: to within rounding (None: nothing finite)
        mean, expected = passes.pop(summed), whole.pop(summed)
        assert mean == expected if expected is None else mean == pytest.approx(expected, rel=1e-15, abs=0)
    assert passes == whole


@given(seed=st.integers(0, 2**16), n=st.integers(1, 300))
def test_quantiles_are_numpys_over_the_finite_pairs(seed, n):
    """The order statistics are selected, not sorted for, and the bits' median is read off the relative error's
    order statistics reversed: both equal the linear quantile of the sorted arrays the docstring defines."""
    rng = np.random.default_rng(seed)
    r = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 3, n)).astype(np.float32)
    a = (r + rng.standard_normal(n).astype(np.float32) * np.float32(1e-3) * (rng.random(n) < 0.7)).astype(np.float32)
    s = error_stats(a, r)
    d = np.abs(a.astype(np.float64) - r.astype(np.float64))
    rel = d / np.maximum(np.abs(r.astype(np.float64)), FP32.smallest_normal)
    with np.errstate(divide="ignore"):
        bits = np.clip(-np.log2(rel), 0, 53)

    def quantile(x, q):  # linear between the sorted neighbours, as the docstring says
        x, pos = np.sort(x), q * (x.size - 1)
        lo, hi = math.floor(pos), math.ceil(pos)
        return x[hi] if lo == hi else x[lo] + (x[hi] - x[lo]) * (pos - lo)

    assert s.ulp_p50 == quantile(d / ulp(r), 0.5) and s.ulp_p99 == quantile(d / ulp(r), 0.99)
    assert s.bits_median == quantile(bits, 0.5) and s.bits_min == bits.min()
    assert s.ulp_p99 == pytest.approx(np.quantile(d / ulp(r), 0.99), rel=1e-14)  # numpy's own lerp, to rounding


def test_means_near_float64s_overflow_and_bits_without_a_sign():
    """The means are rescaled before they are divided (two errors of 1e308 average 1e308, not inf), and a count
    of correct bits is never -0.0 (-log2(1) is)."""
    s = error_stats(np.array([1e308, 1e308]), np.array([0.0, 0.0]), fmt="fp64")
    assert s.mean_abs == 1e308 and s.rmse == pytest.approx(1e308, rel=1e-15)
    s = error_stats(np.array([0.0, 3.0, 0.0]), np.array([1.0, 1.0, 1.0]))
    assert (s.bits_min, s.bits_median) == (0.0, 0.0)
    assert math.copysign(1.0, s.bits_min) == 1.0 and math.copysign(1.0, s.bits_median) == 1.0


# --- errors at the boundary -----------------------------------------------------------------------


def test_shape_mismatch_names_both_shapes_and_no_broadcast():
    with pytest.raises(ShapeError, match=r"\(2, 3\).*\(3,\).*broadcast"):
        error_stats(np.zeros((2, 3)), np.zeros(3))
    with pytest.raises(RuntimeError):  # ShapeError is what torch would raise
        error_stats(torch.zeros(1, 4), torch.zeros(4))


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"atol": -1e-4}, "atol"),
        ({"atol": NAN}, "atol"),
        ({"atol": INF}, "atol"),
        ({"atol": "small"}, "atol"),
        ({"rtol": -1.0}, "rtol"),
        ({"rtol": INF}, "rtol"),
        ({"rel_floor": 0.0}, "rel_floor"),
        ({"rel_floor": -1.0}, "rel_floor"),
        ({"rel_floor": NAN}, "rel_floor"),
        ({"fmt": "fp8"}, "fmt"),
        ({"fmt": "FP32"}, "fmt"),
    ],
)
def test_bad_parameters_name_the_parameter(kwargs, name):
    with pytest.raises(ParameterError, match=rf"{name}=") as info:
        error_stats(np.ones(2), np.ones(2), **kwargs)
    assert isinstance(info.value, ValueError)
    if name == "fmt":
        assert "'fp32'" in str(info.value) and "'bf16'" in str(info.value)


@pytest.mark.parametrize(
    ("actual", "reference", "which"),
    [
        (np.arange(3), np.zeros(3), "actual"),
        (np.zeros(3), torch.arange(3), "reference"),
        (torch.zeros(3, dtype=torch.complex64), torch.zeros(3), "actual"),
        (np.zeros(3, dtype=bool), np.zeros(3), "actual"),
    ],
)
def test_non_float_dtype_raises_dtype_error(actual, reference, which):
    with pytest.raises(DtypeError, match=which):
        error_stats(actual, reference)


def test_to_dict_is_json_and_complete():
    s = error_stats(np.array([1.0, 2.5]), np.array([1.0, 2.0]), fmt="bf16")
    d = s.to_dict()
    assert set(d) == {f for f in ErrorStats.__dataclass_fields__}
    assert d["worst_index"] == [1] and d["fmt"] == "bf16"
    assert d["ulp_max"] == 0.5 / 2.0 ** (1 + 1 - FORMATS["bf16"].precision)  # ulp(2) = 2^(1-p+1)
    assert json.loads(json.dumps(d, allow_nan=False)) == d
