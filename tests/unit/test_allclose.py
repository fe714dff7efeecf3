"""``numerics.allclose.atol_to_pass``: the smallest atol at which KernelBench's check passes, so that the check at
any other atol is known without running it — held against ``torch.allclose`` itself at atols around it."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fp_analysis.numerics import allclose
from fp_analysis.numerics.allclose import AtolToPass, atol_to_pass


def _around(atol: float) -> list[float]:
    """Atols about ``atol``: it, the float32 and float64 numbers beside it, and farther ones."""
    near = [atol, allclose._below(atol), float(np.nextafter(np.float32(atol), np.float32(np.inf))),
            float(np.nextafter(atol, 0.0)), float(np.nextafter(atol, 1.0)), atol * (1 - 1e-9), atol * (1 + 1e-9),
            atol / 2, atol * 2, 0.0]  # fmt: skip
    return [a for a in near if a >= 0.0]


@settings(max_examples=150, deadline=None)
@given(
    size=st.sampled_from([1, 5, 300, 4096]),
    scale=st.floats(-4, 4),
    error=st.floats(-10, 0),
    share=st.floats(0.0, 1.0),
    rtol=st.sampled_from([0.0, 1.3e-6, 1e-4, 1e-2]),
    seed=st.integers(0, 2**31 - 1),
)
def test_the_check_passes_from_the_atol_found_and_at_none_below(size, scale, error, share, rtol, seed):
    generator = torch.Generator().manual_seed(seed)
    reference = torch.randn(size, generator=generator) * 10**scale
    where = torch.rand(size, generator=generator) < share
    candidate = reference + torch.randn(size, generator=generator) * 10 ** (scale + error) * where
    found = atol_to_pass(reference, candidate, rtol)
    assert found.known and found.atol is not None
    assert found.atol == float(np.float32(found.atol))  # a float32 number, as allclose rounds the atol
    for atol in _around(found.atol):
        assert found.passes(atol) == bool(torch.allclose(reference, candidate, atol=atol, rtol=rtol)), atol


def test_the_element_by_element_estimate_is_confirmed_without_a_search(monkeypatch):
    """On ordinary differences the estimate is the answer: the bisection (32 checks) is the fallback, not the way."""
    monkeypatch.setattr(allclose, "_bisect", lambda passes: pytest.fail("the estimate was not confirmed"))
    generator = torch.Generator().manual_seed(3)
    for scale in (1e-3, 1.0, 1e3):
        reference = torch.randn(10_000, generator=generator) * scale
        for error in (1e-7, 1e-4, 1e-1):
            candidate = reference + torch.randn(10_000, generator=generator) * scale * error
            assert atol_to_pass(reference, candidate, 1e-4).known


def test_a_search_finds_the_same_atol_where_the_estimate_is_not_taken(monkeypatch):
    """The bisection alone (the estimate made wrong) gives the same answer: each step is the check's own."""
    generator = torch.Generator().manual_seed(4)
    reference = torch.randn(2000, generator=generator)
    candidate = reference + torch.randn(2000, generator=generator) * 1e-3
    expected = atol_to_pass(reference, candidate, 1e-4)
    monkeypatch.setattr(allclose, "_estimate", lambda *args: 0.5)
    assert atol_to_pass(reference, candidate, 1e-4) == expected


@pytest.mark.parametrize(
    ("reference", "candidate", "expected"),
    [
        ([1.0, 2.0], [1.0, 2.0], AtolToPass(True, 0.0)),  # equal: passes at atol 0
        ([1.0, float("nan")], [1.0, float("nan")], AtolToPass(True, None)),  # allclose's NaNs are never close
        ([1.0, float("inf")], [1.0, 3.0], AtolToPass(True, None)),  # non-finite on one side: no atol passes
        ([float("inf")], [float("inf")], AtolToPass(True, 0.0)),  # the same infinity is equal
    ],
)
def test_special_values_pass_as_allclose_passes_them(reference, candidate, expected):
    assert atol_to_pass(torch.tensor(reference), torch.tensor(candidate), 1e-4) == expected
    for atol in (0.0, 1e-4, 1e30):
        assert expected.passes(atol) == torch.allclose(torch.tensor(reference), torch.tensor(candidate), 1e-4, atol)


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        (torch.zeros(3, dtype=torch.float64), torch.zeros(3, dtype=torch.float64)),  # allclose rounds atol otherwise
        (torch.zeros(3, dtype=torch.int64), torch.zeros(3, dtype=torch.int64)),
        (torch.zeros(3), torch.zeros(4)),
    ],
)
def test_outputs_other_than_float32_alike_are_not_known(reference, candidate):
    """Where the atol is not rounded to float32 (or the shapes differ), nothing is claimed: the pair is run again."""
    assert atol_to_pass(reference, candidate, 1e-4) == AtolToPass(False, None)
    assert not AtolToPass(False, None).passes(1.0)
