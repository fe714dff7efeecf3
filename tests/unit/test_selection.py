"""Integer outputs (``fp_analysis.model.selection``): indices compared exactly, another pick among values that tie
within the fp32 floor explained, any other a bug located; and a candidate whose two runs differ
(``judge.nondeterministic``)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from fp_analysis.errors import OutOfScopeError
from fp_analysis.model.engine import analyse_model
from fp_analysis.model.judge import nondeterministic
from fp_analysis.model.verdict import Analysis, Cause


class _ArgmaxOfLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 32)

    def forward(self, x):
        return torch.argmax(self.fc(x), dim=1)


class _Argmin(nn.Module):
    def forward(self, x):
        return torch.argmin(x, dim=1)


class _Threshold(nn.Module):
    def forward(self, x):
        return (x > 0).long()


def test_equal_indices_are_identical():
    torch.manual_seed(0)
    model, x = _ArgmaxOfLinear(), torch.randn(256, 64)
    reference = model(x)
    assert analyse_model(model, [x], reference, reference.clone()).verdict == "identical"


def test_another_index_among_exactly_tied_values_is_explained():
    torch.manual_seed(0)
    x = torch.randn(8, 100)
    best = torch.argmin(x, dim=1)
    x[2, 77] = x[2, best[2]]  # a tie: argmin returns the first, a kernel may return the other
    reference = _Argmin()(x)
    candidate = reference.clone()
    candidate[2] = 77 if reference[2] != 77 else int(best[2])
    analysis = analyse_model(_Argmin(), [x], reference, candidate)
    assert analysis.explained and analysis.verdict == "accumulation_order", analysis.causes[0].evidence
    assert "tie within the fp32 floor" in analysis.causes[0].evidence


def test_another_index_beyond_the_floor_is_a_located_bug():
    torch.manual_seed(0)
    model, x = _ArgmaxOfLinear(), torch.randn(256, 64)
    reference = model(x)
    candidate = reference.clone()
    candidate[10] = (candidate[10] + 1) % 32  # the second-best or worse: not a tie
    with torch.no_grad():
        values = model.fc(x)[10]
    assert float(values.max() - values[candidate[10]]) > 1e-3  # far from a tie in fp32 terms
    analysis = analyse_model(model, [x], reference, candidate)
    assert analysis.verdict == "bug" and not analysis.explained
    assert analysis.location["bad"] == 1
    assert analysis.recommended_tolerance["atol"] == 0.0


def test_an_index_out_of_range_is_a_bug():
    torch.manual_seed(0)
    x = torch.randn(4, 10)
    reference = _Argmin()(x)
    candidate = reference.clone()
    candidate[0] = 10
    assert analyse_model(_Argmin(), [x], reference, candidate).verdict == "bug"


def test_integers_no_argmax_chose_that_differ_are_out_of_scope_naming_why():
    x = torch.randn(4, 10)
    reference = _Threshold()(x)
    candidate = reference.clone()
    candidate[0, 0] = 1 - candidate[0, 0]
    with pytest.raises(OutOfScopeError, match="no argmax or argmin chose"):
        analyse_model(_Threshold(), [x], reference, candidate)


def _analysis(verdict: str, explained: bool) -> Analysis:
    return Analysis(explained=explained, verdict=verdict, causes=[Cause(verdict, "why", 0.0, "candidate")])


def test_two_runs_that_differ_are_nondeterministic_beside_the_worse_runs_causes():
    both = nondeterministic(_analysis("accumulation_order", True), _analysis("accumulation_order", True), 3, 10, 1e-6)
    assert both.verdict == "nondeterministic + accumulation_order" and both.explained
    assert "differ at 3 of 10 outputs, by up to 1e-06" in both.causes[0].evidence
    racy = nondeterministic(_analysis("accumulation_order", True), _analysis("bug", False), 1, 10, 0.5)
    assert racy.verdict == "nondeterministic + bug" and not racy.explained
