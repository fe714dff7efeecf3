"""The project's fp32 erf / tanh / GELU: accuracy against mpmath, special values, symmetry, flush-to-zero."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from fp_analysis.numerics.gelu32 import TABLES, epilogue32, erf32, gelu32, tanh32
from fp_analysis.numerics.metrics import ulp

F32 = np.float32
GRID = np.concatenate([np.linspace(-10, 10, 40_001), np.geomspace(1e-38, 10, 4_000), [0.0, 3.999, 4.0, 9.49, 9.5]])


def _max_ulp(fn, ref, xs) -> float:
    x = xs.astype(F32)
    exact = np.array([float(ref(mpmath.mpf(float(v)))) for v in x])
    return float(np.max(np.abs(fn(x).astype(np.float64) - exact) / ulp(exact)))


@pytest.mark.parametrize(("fn", "ref", "limit"), [(erf32, mpmath.erf, 2.5), (tanh32, mpmath.tanh, 1.5)])
def test_accuracy_in_ulps(fn, ref, limit):
    with mpmath.workdps(30):
        assert _max_ulp(fn, ref, GRID[::3]) <= limit


@given(st.floats(-12, 12, width=32))
@example(0.0)
@example(-0.0)
@example(float.fromhex("0x1p-149"))
def test_odd_and_bounded(x):
    a = np.array([x], F32)
    for fn in (erf32, tanh32):
        y, z = fn(a)[0], fn(-a)[0]
        assert y == -z and abs(y) <= 1 and math.copysign(1, y) == math.copysign(1, x)


def test_special_values_and_cutoffs():
    x = np.array([np.nan, np.inf, -np.inf, 4.0, 9.5], F32)
    assert np.isnan(erf32(x)[0]) and np.isnan(tanh32(x)[0])
    assert erf32(x)[1:].tolist() == [1.0, -1.0, 1.0, 1.0]
    # Beyond the cutoffs the fp32 value really is 1.0 (the tables stop there on purpose).
    with mpmath.workdps(30):
        for name, fn in (("erf", mpmath.erf), ("tanh", mpmath.tanh)):
            assert F32(float(fn(TABLES[name][2]))) == 1.0


def test_ftz_flushes_subnormal_arguments():
    tiny = np.array([1e-40, -1e-40], F32)
    assert erf32(tiny, ftz=True).tolist() == [0.0, -0.0] and np.all(erf32(tiny) != 0)


def test_gelu_matches_torch_within_a_few_ulps_and_epilogue_order():
    x = np.linspace(-6, 6, 20_001).astype(F32)
    for form in ("none", "tanh"):  # torch's approximate= values: the one GELU vocabulary
        ours = gelu32(x, form).astype(np.float64)
        exact = torch.nn.functional.gelu(torch.from_numpy(x.astype(np.float64)), approximate=form).numpy()
        assert np.max(np.abs(ours - exact) / (np.abs(x) * 2.0**-24 + 2.0**-149)) <= 6  # the epilogue_bound budget
    acc, m = np.array([1.5, -2.0], F32), np.array([2.0, 3.0], F32)
    got = epilogue32(acc, m, 0.01, "none")
    assert got.tolist() == gelu32(np.array([3.0, -0.06], F32), "none").tolist()
