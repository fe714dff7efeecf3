"""A departure that moves the whole output one way (``fp_analysis.model.drift``) is a bug, however wide the floor;
rounding in any order is not; and fp32's underflow does not widen every output's floor (``floor.with_underflow``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from fp_analysis.model.drift import DRIFT_ULPS, DRIFT_Z, LEAST_RUNS, drift_of, drifting
from fp_analysis.model.engine import analyse_model
from fp_analysis.numerics.formats import FORMATS

_U = FORMATS["fp32"].unit_roundoff


def _runs(centre: torch.Tensor, count: int, seed: int) -> list[torch.Tensor]:
    """Drifts of random-sign deviations of one unit roundoff of each output, as the floor's runs draw them."""
    generator = torch.Generator().manual_seed(seed)
    return [drift_of(centre + _signs(centre, generator) * _U * centre.abs(), centre) for _ in range(count)]


def _signs(like: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    return (torch.randint(0, 2, like.shape, generator=generator) * 2 - 1).to(like.dtype)


_NONE = torch.zeros(2, dtype=torch.float64)  # no legitimate drift measured beyond DRIFT_ULPS


def test_a_scaled_or_shifted_departure_is_measured_as_that_fraction_of_the_outputs():
    y = torch.linspace(1.0, 2.0, 1000, dtype=torch.float64)
    scale, shift = drift_of(y + 3e-5 * y, y)
    assert scale == pytest.approx(3e-5, rel=1e-9)
    assert drift_of(y + 1e-4, y)[1] == pytest.approx(1e-4 / float(y.pow(2).mean().sqrt()), rel=1e-9)
    assert shift > 0
    assert torch.isnan(drift_of(y, torch.zeros_like(y))).all()  # no size to take a fraction of


@pytest.mark.parametrize("seed", range(5))
def test_rounding_in_random_directions_does_not_drift(seed):
    y = torch.randn(4096, dtype=torch.float64, generator=torch.Generator().manual_seed(seed)) + 3.0
    rounded = y + _signs(y, torch.Generator().manual_seed(seed + 200)) * _U * y.abs()
    assert drifting(rounded, y, _runs(y, 8, seed), _NONE) is None


def test_a_drift_beyond_the_allowance_is_named_with_its_direction_and_size():
    y = torch.randn(4096, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) + 3.0
    runs = _runs(y, 8, 1)
    spread = float(torch.stack(runs).pow(2).mean(0).sqrt()[0])
    beyond = (DRIFT_ULPS * _U + DRIFT_Z * spread) * 1.5
    found = drifting(y - beyond * y, y, runs, _NONE)
    assert found is not None and found.direction == "scale" and found.size == pytest.approx(-beyond, rel=1e-6)
    assert "scales the outputs by 1 −" in found.words
    # a constant rounded once moves every output by u/2 at most: legitimate arithmetic, allowed
    assert drifting(y + 0.5 * _U * y, y, runs, _NONE) is None
    # as is what the fp32 Model itself drifts by, the floor's multiple of it
    assert drifting(y - beyond * y, y, runs, torch.full((2,), 2 * beyond, dtype=torch.float64)) is None
    assert drifting(y - beyond * y, y, runs[: LEAST_RUNS - 1], _NONE) is None  # too few runs: not judged


class _LayerNorm(nn.Module):
    def __init__(self, features: int, eps: float = 1e-5):
        super().__init__()
        self.ln = nn.LayerNorm(features, eps=eps)

    def forward(self, x):
        return self.ln(x)


class _SequentialMean(nn.Module):
    """LayerNorm with its two means summed one term at a time in fp32 (a thread per row): any-order territory."""

    def forward(self, x):
        def mean(t):
            sums = np.add.accumulate(t.numpy().astype(np.float32), axis=-1, dtype=np.float32)[:, -1:]
            return torch.from_numpy(sums / np.float32(t.shape[-1]))

        d = x - mean(x)
        return d / torch.sqrt(mean(d * d) + 1e-5)


def _judge(model, candidate, x):
    with torch.no_grad():
        return analyse_model(model, [x], model(x), candidate(x))


def test_a_layernorm_whose_eps_is_ten_times_too_large_at_mean_100_is_a_bug_though_within_the_floor():
    """At mean 100 a row's mean errs by ~1e-4 in any order: every output's floor holds the wrong ε's 3e-3 relative
    change, but it scales every row the same way."""
    x = torch.randn(64, 1024, generator=torch.Generator().manual_seed(0)) * 0.5 + 100.0
    analysis = _judge(_LayerNorm(1024), _LayerNorm(1024, eps=1e-4), x)
    assert analysis.verdict == "bug"
    assert "scales the outputs by 1 −" in analysis.causes[0].evidence
    assert "of 65536 outputs departing one way" in analysis.location["summary"]  # those moved by more than σ


def test_a_layernorm_with_sequential_means_at_mean_100_is_arithmetic():
    x = torch.randn(64, 1024, generator=torch.Generator().manual_seed(0)) * 0.5 + 100.0
    analysis = _judge(_LayerNorm(1024), _SequentialMean(), x)
    assert analysis.explained and analysis.verdict == "accumulation_order", analysis.causes[0].evidence


class _Thirds(nn.Module):
    """A scale rounded to fp32 and applied 24 times: the fp32 Model itself drifts by 12 unit roundoffs."""

    def forward(self, x):
        for _ in range(24):
            x = x * (1.0 / 3.0)
        return x


def test_what_the_fp32_model_drifts_by_itself_is_not_a_bug():
    x = torch.randn(64, 1024, generator=torch.Generator().manual_seed(0)) * 1e6
    with torch.no_grad():
        y = _Thirds()(x)
    assert drift_of(y.double(), _Thirds()(x.double()))[0].abs() > DRIFT_ULPS * _U  # the case is what it claims
    assert analyse_model(_Thirds(), [x], y, y.clone()).verdict == "identical"
    assert _judge(_Thirds(), lambda t: (t * 3.0**-24).float(), x).explained


def _mean_100(rows: int = 256, features: int = 1020) -> torch.Tensor:
    return torch.randn(rows, features, generator=torch.Generator().manual_seed(0)) + 100.0


def test_a_mean_through_a_rounded_reciprocal_magnified_by_the_centring_is_arithmetic():
    """fl(1/n) errs the same way for every row, and x − mean at a mean of 100 magnifies it a hundredfold: every
    rounding one way does as much (the one-sign runs), so it is legitimate."""
    x = _mean_100()
    analysis = _judge(_LayerNorm(1020), lambda t: _normalised(t, torch.tensor(1 / 1020, dtype=torch.float32)), x)
    assert analysis.verdict == "accumulation_order", analysis.causes[0].evidence  # not fast-math: it has none


def _normalised(x, reciprocal):
    d = x - x.sum(-1, keepdim=True) * reciprocal
    return d * torch.rsqrt((d * d).sum(-1, keepdim=True) * reciprocal + 1e-5)


def test_a_layernorm_whose_eps_is_doubled_at_mean_100_is_a_bug_not_fast_math():
    """Every output stays within plain fp32's floor and within fast-math's; the scale gives it away in both."""
    x = _mean_100()
    analysis = _judge(_LayerNorm(1020), _LayerNorm(1020, eps=2e-5), x)
    assert analysis.verdict == "bug", analysis.causes[0].evidence
    assert "scales the outputs by 1 −" in analysis.causes[0].evidence


class _Swish(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


def _inputs_past_fp32s_exp_range():
    """x·sigmoid(x) with x ~ 100·N(0, 1): for x < −88.7, fp32's e^−x is +inf and the output 0, though the truth is a
    normal number near 2^-122 down to below fp32's range."""
    return torch.randn(8, 4096, generator=torch.Generator().manual_seed(0)) * 100.0


def test_outputs_fp32_flushes_to_zero_keep_the_floor_of_the_others():
    x = _inputs_past_fp32s_exp_range()
    assert bool((x < -88.8).any())
    analysis = _judge(_Swish(), lambda t: t / (1 + torch.exp(-t)), x)
    assert analysis.explained, analysis.causes[0].evidence
    assert analysis.floor["floor_units"] < 100  # 10^7 where the flushed outputs set the baseline


def test_a_sigmoid_clamped_at_ten_is_a_bug_where_fp32_underflows_elsewhere():
    x = _inputs_past_fp32s_exp_range()
    analysis = _judge(_Swish(), lambda t: t * torch.sigmoid(t.clamp(-10.0, 10.0)), x)
    assert analysis.verdict == "bug"
