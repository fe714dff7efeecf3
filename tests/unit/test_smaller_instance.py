"""A problem whose fp64 analysis does not fit is measured on a smaller instance: the sizes get_inputs alone reads,
halved (the batch first) until the copies fit, said in a note and in the context."""

from __future__ import annotations

import pytest

from fp_analysis.errors import AnalysisMemoryError
from fp_analysis.explain import smaller
from fp_analysis.explain.kernelbench import load_problem
from fp_analysis.study import problem_tolerance
from fp_analysis.study.problem_tolerance import ToleranceOptions

PROBLEM = """
import torch
from torch import nn

batch_size = 16
features = 8
dim = 64


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.features = features

    def forward(self, x):
        return x / torch.norm(x, p="fro")


def get_inputs():
    return [torch.rand(batch_size, features, dim)]


def get_init_inputs():
    return [features]
"""


def _problem(tmp_path):
    path = tmp_path / "frobenius.py"
    path.write_text(PROBLEM)
    return path


def test_the_sizes_of_the_inputs_alone_are_the_ones_get_init_inputs_does_not_read(tmp_path):
    assert smaller.input_sizes(load_problem(_problem(tmp_path))) == {"batch_size": 16, "dim": 64}


def test_the_batch_is_halved_first_until_the_copies_fit(tmp_path, monkeypatch):
    problem = load_problem(_problem(tmp_path))
    largest = 16 * 8 * 64
    monkeypatch.setattr(smaller, "available_bytes", lambda device: largest * 8 * 4 / 0.8 / 8 + 1)  # an eighth
    changed = smaller.shrink(problem, 16, largest, copies=4, device="cpu", why=AnalysisMemoryError("too big"))
    assert changed == {"batch_size": [16, 2]} and problem.module.batch_size == 2
    assert problem.module.get_inputs()[0].shape == (2, 8, 64)
    monkeypatch.setattr(smaller, "available_bytes", lambda device: 10)  # nothing fits: the reason is kept
    with pytest.raises(AnalysisMemoryError, match="too big — and the problem's input sizes"):
        smaller.shrink(problem, 2, largest, copies=4, device="cpu", why=AnalysisMemoryError("too big"))


def test_a_tolerance_that_does_not_fit_is_measured_on_a_smaller_instance_and_says_so(tmp_path, monkeypatch):
    measured = []
    real = problem_tolerance.tolerance_of

    def tolerance_of(model, inputs, **kwargs):  # the first size does not fit, as on a device too small for it
        measured.append(tuple(inputs[0].shape))
        if len(measured) == 1:
            raise AnalysisMemoryError("the fp64 copies need 2 GB, 1 GB available")
        return real(model, inputs, **kwargs)

    monkeypatch.setattr(problem_tolerance, "tolerance_of", tolerance_of)
    monkeypatch.setattr(smaller, "available_bytes", lambda device: 16 * 8 * 64 * 8 * 16 / 0.8 / 2 + 1)  # a half
    options = ToleranceOptions(device="cpu", timeout=60).to_json()
    result = problem_tolerance.tolerance_job(_problem(tmp_path), options=options, timeout=60, folder=str(tmp_path))
    assert measured == [(16, 8, 64), (8, 8, 64)]
    assert result["context"]["smaller_instance"] == {"batch_size": [16, 8]}
    assert result["notes"][0].startswith("measured on a smaller instance of the problem (batch_size 16 → 8")
    assert tuple(result["shape"]) == (8, 8, 64) and result["needed"][0]["atol"] > 0
