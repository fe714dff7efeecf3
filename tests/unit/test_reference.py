"""Where the fp64 and mpmath references agree, and by how much.

Measured on this suite's data (fp64, u = 2^-53):
- fp64_at (fsum) equals mpmath_at rounded to fp64 exactly: both are the correctly rounded exact sum
  (hypothesis found the case that needs mpmath_at to be exact rather than rounded to dps: a sum whose
  136-bit rounding landed on an fp64 tie that the exact sum's tiny last term broke).
- fp64_at (pairwise) and fp64_full stay within γ_K(fp64)·Σ|w·x| of mpmath (Higham 2002, eq. (4.4));
  pairwise reaches at most 0.06% of that bound on random/cancelling data, 3% on wide-range data.
- The fp64 epilogue (torch) is within 3 ulps of mpmath where the GELU input z ≥ −1, and within
  2·eps·|z| absolutely everywhere; for z ≪ 0 its *relative* error is unbounded, because torch computes
  1 + erf(z/√2) (cancellation) rather than erfc, so GELU(−10) ≈ −7.6e-23 carries an error ~1e-16·|z|.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fp_analysis.ops.reference as reference
from fp_analysis.errors import DtypeError, ParameterError, ShapeError
from fp_analysis.ops.conv import conv2d_spec
from fp_analysis.ops.epilogue import EpilogueSpec, GeluForm, epilogue_mpmath, epilogue_torch
from fp_analysis.ops.reference import (
    SumMethod,
    abs_dot_at,
    fp64_at,
    fp64_full,
    mpmath_at,
    mpmath_to_float64,
)
from fp_analysis.ops.terms import Terms, gather_terms, sample_output_indices

from ..conv_configs import CHUNK_CONFIGS, gamma, operands

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")

# ----------------------------------------------------------------------------------------------
# fp64_full
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("spec", "input_shape"), CHUNK_CONFIGS)
@pytest.mark.parametrize("max_chunk_bytes", [1, 3000, 20000])
def test_fp64_full_chunked_equals_unchunked_bitwise(spec, input_shape, max_chunk_bytes, monkeypatch):
    """1 byte forces one output channel of one batch item per call; the others mix batch and group chunks."""
    x, w, b = operands(spec, input_shape, 0)
    whole = fp64_full(spec, x, w, b)
    calls = []
    real_conv64 = reference._conv64
    monkeypatch.setattr(reference, "_conv64", lambda *a: calls.append(a) or real_conv64(*a))
    chunked = fp64_full(spec, x, w, b, max_chunk_bytes=max_chunk_bytes)
    assert torch.equal(whole, chunked)
    assert whole.dtype == torch.float64
    if max_chunk_bytes == 1:
        assert len(calls) == input_shape[0] * spec.out_channels


@pytest.mark.parametrize(("spec", "input_shape"), CHUNK_CONFIGS)
def test_fp64_full_is_torchs_fp64_conv_then_the_bias(spec, input_shape):
    x, w, b = operands(spec, input_shape, 1)
    padded = F.pad(x, [p for pair in reversed(spec.padding) for p in pair]).double()
    conv = F.conv2d if spec.spatial_dims == 2 else F.conv3d
    expected = conv(padded, w.double(), None, spec.stride, 0, spec.dilation, spec.groups)
    if b is not None:
        expected = expected + b.double().reshape(-1, *([1] * spec.spatial_dims))
    assert torch.equal(fp64_full(spec, x, w, b), expected)


def test_fp64_full_with_epilogue_chunked_equals_unchunked_and_epilogue_torch():
    spec = conv2d_spec(6, 4, 3, padding=1, groups=2)
    x, w, b = operands(spec, (2, 6, 5, 7), 2)
    m = torch.randn(4, 1, 1)
    epilogue = EpilogueSpec(0.01, GeluForm.TANH)
    whole = fp64_full(spec, x, w, b, epilogue=epilogue, multiplier=m)
    chunked = fp64_full(spec, x, w, b, epilogue=epilogue, multiplier=m, max_chunk_bytes=1)
    assert torch.equal(whole, chunked)
    y = F.conv2d(x.double(), w.double(), padding=1, groups=2) + b.double().reshape(-1, 1, 1)
    assert torch.equal(whole, epilogue_torch(y, m.double(), epilogue))


def test_fp64_full_epilogue_does_not_depend_on_chunking_across_many_blocks(monkeypatch):
    """torch's CPU GELU rounds differently in the vectorised body and the scalar tail of a range, so
    fp64_full applies it to fixed flat blocks; with 7-element blocks, chunking must still not matter."""
    monkeypatch.setattr(reference, "_EPILOGUE_BLOCK", 7)
    spec = conv2d_spec(4, 6, (3, 2), padding=(1, 0), groups=2)
    x, w, b = operands(spec, (3, 4, 6, 9), 11)
    x = x * 30  # wide range of GELU inputs, many in the erf/tanh tails
    m = torch.randn(6, 1, 1)
    for form in GeluForm:
        epilogue = EpilogueSpec(0.01, form)
        whole = fp64_full(spec, x, w, b, epilogue=epilogue, multiplier=m)
        for budget in (1, 5000):
            assert torch.equal(whole, fp64_full(spec, x, w, b, epilogue=epilogue, multiplier=m, max_chunk_bytes=budget))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(x=torch.rand(1, 3, 5, 5, dtype=torch.float64).int()), DtypeError, "x must have a floating-point"),
        (dict(weight=torch.rand(4, 3, 2, 3)), ShapeError, r"weight must have shape \[4, 3, 3, 3\]"),
        (dict(bias=None), ParameterError, "bias is None but spec.bias is True"),
        (dict(multiplier=torch.rand(4, 1, 1)), ParameterError, "multiplier was given without an epilogue"),
        (dict(epilogue=EpilogueSpec()), ParameterError, "epilogue needs the per-channel multiplier"),
        (
            dict(epilogue=EpilogueSpec(), multiplier=torch.rand(4)),
            ShapeError,
            r"multiplier must have shape \[4, 1, 1\]",
        ),
        (dict(max_chunk_bytes=0), ParameterError, "max_chunk_bytes must be a positive integer"),
        (dict(x=torch.rand(1, 3, 2, 5)), ShapeError, "Kernel size can't be greater"),
    ],
)
def test_fp64_full_validates(kwargs, error, match):
    spec = conv2d_spec(3, 4, 3)
    args = dict(x=torch.rand(1, 3, 5, 5), weight=torch.rand(4, 3, 3, 3), bias=torch.rand(4))
    args.update(kwargs)
    with pytest.raises(error, match=match):
        fp64_full(spec, args.pop("x"), args.pop("weight"), args.pop("bias"), **args)


# ----------------------------------------------------------------------------------------------
# fp64_at / abs_dot_at / mpmath_at on sampled outputs
# ----------------------------------------------------------------------------------------------


def test_fp64_at_and_fp64_full_agree_within_the_fp64_summation_bound():
    spec = conv2d_spec(7, 6, (5, 9), padding=(2, 4), dilation=(2, 3), groups=1)
    x, w, b = operands(spec, (2, 7, 13, 29), 4)
    full = fp64_full(spec, x, w, b).numpy()
    index = sample_output_indices(full.shape, 300, seed=5)
    terms = gather_terms(spec, x, w, b, index)
    difference = np.abs(fp64_at(terms) - full[tuple(index.T)])
    assert (difference <= gamma(spec.K + 1) * abs_dot_at(terms)).all()


def _terms(w: np.ndarray, x: np.ndarray, bias: np.ndarray | None = None) -> Terms:
    m = w.shape[0]
    index = np.zeros((m, 4), dtype=np.int64)
    index[:, 1] = np.arange(m) % 3
    return Terms(w=w.astype(np.float32), x=x.astype(np.float32), bias=bias, index=index)


def _cancelling_terms(rng: np.random.Generator, m: int, k: int) -> Terms:
    """Half the products are the negatives of the other half, plus tiny perturbations: sums ≈ 1e-7·Σ|w·x|."""
    w = rng.normal(size=(m, k // 2)).astype(np.float32)
    x = rng.normal(size=(m, k // 2)).astype(np.float32) * np.float32(1e3)
    noise = (rng.normal(size=(m, k // 2)) * 1e-7).astype(np.float32)
    return _terms(np.concatenate([w, -w], axis=1), np.concatenate([x, x + noise * x], axis=1))


DATASETS = {
    "random": lambda rng: _terms(
        rng.normal(size=(50, 577)), rng.normal(size=(50, 577)), rng.normal(size=50).astype(np.float32)
    ),
    "cancelling": lambda rng: _cancelling_terms(rng, 50, 1440),
    "wide_range": lambda rng: _terms(
        rng.normal(size=(40, 97)) * 10.0 ** rng.integers(-30, 30, size=(40, 97)), rng.normal(size=(40, 97))
    ),
}


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_fsum_fp64_at_is_mpmath_rounded_to_fp64(name):
    """Both are the exact sum rounded once to fp64, so they agree bit for bit."""
    terms = DATASETS[name](np.random.default_rng(6))
    exact = mpmath_to_float64(mpmath_at(terms))
    np.testing.assert_array_equal(fp64_at(terms, SumMethod.FSUM), exact)


# Fraction of the γ_{K+1} bound the pairwise error reached over seeds 0–4 (max), with headroom:
# random/cancelling (K = 577, 1440): ≤ 0.06%; wide_range (K = 97, a few terms dominate so the error is a
# few u·max|w·x| against a bound of K·u·Σ|w·x|): ≤ 3%.
MEASURED_FRACTION_OF_BOUND = {"random": 0.002, "cancelling": 0.001, "wide_range": 0.06}


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_pairwise_fp64_at_is_within_gamma_k_of_mpmath(name):
    """|ŝ − s| ≤ γ_{K+1}·Σ|w·x| (Higham 2002, eq. (4.4)), and in practice far inside it."""
    terms = DATASETS[name](np.random.default_rng(7))
    exact = mpmath_to_float64(mpmath_at(terms))
    error = np.abs(fp64_at(terms, "pairwise") - exact)
    bound = gamma(terms.K + 1) * abs_dot_at(terms)
    assert (error <= bound).all()
    assert (error <= MEASURED_FRACTION_OF_BOUND[name] * bound).all()


def test_cancelling_data_is_really_ill_conditioned():
    terms = DATASETS["cancelling"](np.random.default_rng(8))
    condition = abs_dot_at(terms) / np.abs(mpmath_to_float64(mpmath_at(terms)))
    assert np.median(condition) > 1e5


@given(
    data=hnp.arrays(
        np.float32,
        st.tuples(st.integers(1, 4), st.integers(1, 23)).map(lambda s: (2, *s)),
        elements=st.floats(-(2.0**60), 2.0**60, width=32, allow_subnormal=True),
    )
)
@example(data=np.array([[[3.0, -3.0, 1e-45]], [[2.0, 2.0, 1.0]]], dtype=np.float32))  # exact cancellation + subnormal
@example(data=np.array([[[-0.0, 0.0]], [[1.0, 1.0]]], dtype=np.float32))  # signed zeros
@example(data=np.array([[[1e18, 1.0, -1e18]], [[1e18, 1.0, 1e18]]], dtype=np.float32))  # 1e36 swamps 1.0
@example(  # the big products sum to an fp64 tie that the subnormal×1e17 product (~1e-27) breaks upward
    data=np.array(
        [[[4.2244023e16, 1.4012985e-45, *[6.8833572e17] * 6]], [[6.8833572e17] * 8]],
        dtype=np.float32,
    )
)
def test_references_agree_on_arbitrary_float32_terms(data):
    w, x = data
    terms = _terms(w, x)
    exact = mpmath_to_float64(mpmath_at(terms))
    np.testing.assert_array_equal(fp64_at(terms), exact)
    assert (np.abs(fp64_at(terms, "pairwise") - exact) <= gamma(terms.K) * abs_dot_at(terms)).all()
    assert (abs_dot_at(terms) >= np.abs(exact)).all()


def test_abs_dot_at_counts_the_bias_and_rounds_up_one_ulp():
    terms = _terms(np.array([[1.0, -2.0]]), np.array([[3.0, 4.0]]), np.array([-5.0], dtype=np.float32))
    assert abs_dot_at(terms).tolist() == [np.nextafter(3.0 + 8.0 + 5.0, np.inf)]
    assert fp64_at(terms).tolist() == fp64_at(terms, "pairwise").tolist() == [3.0 - 8.0 - 5.0]


# ----------------------------------------------------------------------------------------------
# Epilogue: fp64 (torch) vs mpmath
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("form", list(GeluForm))
def test_fp64_epilogue_is_within_a_few_ulps_of_mpmath(form):
    """Measured max: 2–3 ulps where the GELU input z ≥ −1; absolute error ≤ 1.3·eps·|z| everywhere."""
    rng = np.random.default_rng(9)
    y = np.concatenate([rng.normal(0, 3, 1500), rng.normal(0, 300, 200), np.linspace(-40, 40, 301)])
    m = rng.normal(0, 1, y.size)
    spec = EpilogueSpec(0.01, form)
    fp64 = epilogue_torch(torch.from_numpy(y), torch.from_numpy(m), spec).numpy()
    exact = mpmath_to_float64(epilogue_mpmath(y, m, spec, dps=30))
    z = y * m
    z = np.where(z > 0, z, 0.01 * z)
    error = np.abs(fp64 - exact)
    moderate = z >= -1
    assert (error[moderate] <= 3 * np.spacing(np.abs(exact[moderate]))).all()
    assert (error <= 2 * np.finfo(np.float64).eps * np.abs(z)).all()


def test_mpmath_at_with_epilogue_matches_fp64_full_on_conv_gelu():
    spec = conv2d_spec(5, 4, 3, padding=1)
    x, w, b = operands(spec, (2, 5, 6, 7), 10)
    m = torch.randn(4, 1, 1)
    epilogue = EpilogueSpec()
    full = fp64_full(spec, x, w, b, epilogue=epilogue, multiplier=m).numpy()
    index = sample_output_indices(full.shape, 60, seed=1)
    terms = gather_terms(spec, x, w, b, index)
    exact = mpmath_to_float64(mpmath_at(terms, epilogue=epilogue, multiplier=m))
    # conv error ≤ γ_K·Σ|w·x|, scaled by |m|·max GELU′ (≈ 1.13) through the epilogue, plus its own ulps.
    conv_bound = gamma(spec.K + 1) * abs_dot_at(terms) * np.abs(m.numpy().reshape(-1)[index[:, 1]]) * 1.13
    assert (np.abs(full[tuple(index.T)] - exact) <= conv_bound + 4 * np.spacing(np.abs(exact))).all()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(dps=16), ParameterError, "dps must be an integer >= 17"),
        (dict(dps=50.0), ParameterError, "dps must be an integer >= 17"),
        (dict(multiplier=torch.ones(3, 1, 1)), ParameterError, "multiplier was given without an epilogue"),
        (dict(epilogue=EpilogueSpec()), ParameterError, "needs the per-channel multiplier"),
        (
            dict(epilogue=EpilogueSpec(), multiplier=torch.ones(3)),
            ShapeError,
            r"multiplier must have shape \[C_out, 1, 1\]",
        ),
        (dict(epilogue=EpilogueSpec(), multiplier=torch.ones(2, 1, 1)), ShapeError, "terms reference output channel 2"),
    ],
)
def test_mpmath_at_validates(kwargs, error, match):
    terms = _terms(np.ones((3, 2)), np.ones((3, 2)))
    with pytest.raises(error, match=match):
        mpmath_at(terms, **kwargs)


def test_sampled_references_refuse_non_terms_and_unknown_methods():
    with pytest.raises(ParameterError, match="terms must be a Terms"):
        fp64_at(np.ones((2, 2)))
    with pytest.raises(ParameterError, match="method must be one of 'fsum', 'pairwise'"):
        fp64_at(_terms(np.ones((1, 1)), np.ones((1, 1))), "kahan")
