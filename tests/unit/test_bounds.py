"""Every emulated order stays within its deterministic bound, on every example hypothesis draws."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from fp_analysis.errors import ParameterError
from fp_analysis.numerics.bounds import (
    dot_bound,
    epilogue_bound,
    gamma,
    gamma_tilde,
    lambda_for_probability,
    rounding_depth,
)
from fp_analysis.numerics.orders import AccumulationSpec, Combine, Contraction, OperandRounding, Order, accumulate

F32 = np.float32
ALL_SPECS = [
    AccumulationSpec(order, contraction, rounding, ftz, block=3, splits=5, combine=combine)
    for order in Order
    for contraction in Contraction
    for rounding in OperandRounding
    for ftz in (False, True)
    for combine in Combine
    if combine is Combine.TREE or order is Order.SPLIT_K
]


def _exact_error(got: np.ndarray, w, x, init) -> np.ndarray:
    """|got − (init + Σ w·x)| computed exactly with rationals, then rounded to float64 (upward-safe by 1 ulp)."""
    out = []
    for m in range(w.shape[0]):
        exact = sum((Fraction(float(a)) * Fraction(float(b)) for a, b in zip(w[m], x[m], strict=True)), Fraction(0))
        if init is not None:
            exact += Fraction(float(init[m]))
        out.append(np.nextafter(float(abs(Fraction(float(got[m])) - exact)), math.inf))
    return np.array(out)


def _terms(draw, m, k):
    kind = draw(st.sampled_from(["uniform", "normal", "heavy", "subnormal", "cancel", "huge"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if kind == "uniform":
        w, x = rng.uniform(-1, 1, (m, k)) / math.sqrt(k), rng.random((m, k))
    elif kind == "normal":
        w, x = rng.standard_normal((m, k)), rng.standard_normal((m, k))
    elif kind == "heavy":
        w, x = rng.standard_cauchy((m, k)), rng.standard_t(2, (m, k))
    elif kind == "subnormal":
        w, x = rng.standard_normal((m, k)) * 2.0**-70, rng.standard_normal((m, k)) * np.exp2(rng.integers(-80, -50))
    elif kind == "cancel":  # pairs of near-opposite products: the sum is tiny next to Σ|w·x|
        half = rng.standard_normal((m, (k + 1) // 2))
        w = np.concatenate([half, half], axis=1)[:, :k]
        x = np.concatenate([np.ones_like(half), -np.ones_like(half) * (1 + 2.0**-20)], axis=1)[:, :k]
    else:
        w, x = rng.standard_normal((m, k)) * 2.0**60, rng.standard_normal((m, k)) * 2.0**50
    init = rng.standard_normal(m) * float(np.abs(w * x).mean()) if draw(st.booleans()) else None
    return w.astype(F32), x.astype(F32), None if init is None else init.astype(F32)


@st.composite
def problems(draw):
    m, k = draw(st.integers(1, 4)), draw(st.integers(1, 97))
    return (*_terms(draw, m, k), draw(st.sampled_from(ALL_SPECS)))


@given(problems())
@example((np.full((1, 3), 2.0**-75, F32), np.full((1, 3), 2.0**-75, F32), None, AccumulationSpec(ftz=True)))
@example((np.array([[1.0, 2.0**-24, 2.0**-24]], F32), np.ones((1, 3), F32), None, AccumulationSpec()))
def test_error_within_deterministic_bound(problem):
    w, x, init, spec = problem
    got = accumulate(w, x, spec, init)
    bound = dot_bound(w, x, spec, init)
    finite = np.isfinite(got) & np.isfinite(bound.deterministic)
    err = _exact_error(got[finite], w[finite], x[finite], None if init is None else init[finite])
    assert np.all(err <= bound.deterministic[finite]), (spec.label, err, bound.deterministic[finite])
    assert np.all(bound.probabilistic <= bound.deterministic)


def test_probabilistic_bound_holds_for_nearly_all_outputs_and_is_tighter():
    rng = np.random.default_rng(0)
    k = 1440
    w = (rng.uniform(-1, 1, (2000, k)) / math.sqrt(k)).astype(F32)
    x = rng.random((2000, k), dtype=F32)
    exact = np.array([math.fsum(r) for r in w.astype(np.float64) * x])
    for spec in (AccumulationSpec(), AccumulationSpec(operand_rounding="tf32")):
        bound = dot_bound(w, x, spec)
        err = np.abs(accumulate(w, x, spec) - exact)
        assert np.mean(err <= bound.probabilistic) >= bound.probability
        assert np.all(err <= bound.deterministic)
        assert np.median(bound.probabilistic / bound.deterministic) < 0.25


def test_depths_follow_higham():
    assert rounding_depth(AccumulationSpec(), 1440, has_init=False) == 1440
    assert rounding_depth(AccumulationSpec(contraction="separate"), 10, has_init=True) == 11
    assert rounding_depth(AccumulationSpec("tree", block=32), 1440, has_init=False) == 32 + math.ceil(math.log2(45))
    spec = AccumulationSpec("split_k", splits=4, combine="sequential")
    assert rounding_depth(spec, 100, has_init=False) == 25 + 3


def test_gamma_functions():
    u = 2.0**-24
    assert gamma(10, u) == 10 * u / (1 - 10 * u)
    assert gamma_tilde(10_000, u, 1.0) < gamma(10_000, u)  # λ√n·u against n·u: the point of the model
    with pytest.raises(ParameterError, match="n·u < 1"):
        gamma(2**24, u)
    lam = lambda_for_probability(1440, 0.99, u)
    assert 1 - 2 * 1441 * math.exp(-((lam * (1 - u)) ** 2) / 2) == pytest.approx(0.99)
    with pytest.raises(ParameterError, match="probability=1"):
        lambda_for_probability(10, 1, u)


def test_epilogue_bound_covers_fp32_epilogue():
    import torch

    from fp_analysis.ops.epilogue import EpilogueSpec, epilogue_torch

    rng = np.random.default_rng(3)
    y = rng.standard_normal(20_000).astype(F32) * 3
    m = rng.standard_normal(20_000).astype(F32)
    y_err = np.full(y.shape, 1e-6)
    perturbed = (y.astype(np.float64) + rng.uniform(-1, 1, y.shape) * y_err).astype(F32)
    spec = EpilogueSpec()
    fp32 = epilogue_torch(torch.from_numpy(perturbed), torch.from_numpy(m), spec).numpy()
    fp64 = epilogue_torch(torch.from_numpy(y.astype(np.float64)), torch.from_numpy(m.astype(np.float64)), spec).numpy()
    assert np.all(np.abs(fp32 - fp64) <= epilogue_bound(y, y_err + np.abs(perturbed - y), m))
