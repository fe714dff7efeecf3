"""Large outputs are analysed one batch item at a time (``fp_analysis.explain.job._batch_subset``): run alone where
the Model treats items apart, else kept from the whole Model's evaluations (``model.scope.KeptItems``), so a norm over
the whole tensor is analysed with its own semantics and a bug in the worst item is still found there."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from torch import nn

from fp_analysis.explain import job
from fp_analysis.model.engine import analyse_model
from fp_analysis.model.scope import KeptItems


class FrobeniusNorm(nn.Module):
    def forward(self, x):
        return x / torch.norm(x, p="fro")


class Scaled(nn.Module):
    def forward(self, x):
        return 3.0 * x.sum(-1)


def _trial(model, x, candidate=None):
    reference = model(x)
    return SimpleNamespace(inputs=[x], reference=reference, candidate=reference.clone() if candidate is None else
                           candidate)  # fmt: skip


@pytest.fixture
def small_subset(monkeypatch):
    monkeypatch.setattr(job, "_SUBSET_ABOVE", 64)


def test_a_model_that_mixes_items_keeps_the_worst_item_of_its_whole_evaluation(small_subset):
    x = torch.rand(6, 8, 16, generator=torch.Generator().manual_seed(0))
    model = FrobeniusNorm()
    candidate = model(x).clone()
    candidate[4, 3, 5] *= 1.001  # a bug in item 4 alone, larger than any rounding
    analysed, inputs, ref_out, cand_out, items = job._batch_subset(model, _trial(model, x, candidate), "fp32", 0)
    assert isinstance(analysed, KeptItems) and items == [4] and inputs[0].shape == x.shape
    assert torch.equal(ref_out, model(x)[4:5]) and torch.equal(cand_out, candidate[4:5])
    analysis = analyse_model(analysed, inputs, ref_out, cand_out)
    assert analysis.verdict == "bug" and "1 of 128 outputs" in analysis.location["summary"]
    same = analyse_model(analysed, inputs, ref_out, ref_out.clone())
    assert same.verdict == "identical"


def test_a_model_that_treats_items_apart_runs_the_worst_item_alone(small_subset):
    x = torch.rand(6, 16, 8, generator=torch.Generator().manual_seed(1))
    model = Scaled()
    candidate = model(x).clone()
    candidate[2, 1] += 1.0
    analysed, inputs, ref_out, _, items = job._batch_subset(model, _trial(model, x, candidate), "fp32", 0)
    assert analysed is model and items == [2] and inputs[0].shape == (1, 16, 8)
    assert torch.equal(ref_out, model(x)[2:3])


def test_kept_items_name_the_models_own_modules_and_parameters():
    model = nn.Sequential(nn.Linear(4, 4), nn.LayerNorm(4))
    kept = KeptItems(model, 1)
    assert [name for name, _ in kept.named_parameters()] == [name for name, _ in model.named_parameters()]
    assert torch.equal(kept(torch.ones(3, 4)), model(torch.ones(3, 4))[1:2])


_GELU_PROBLEM = """
import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        return torch.nn.functional.gelu(x)


def get_inputs():
    return [torch.randn(8, 128)]


def get_init_inputs():
    return []
"""
_DECOY = """
import torch
from torch import nn


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.nn.functional.gelu(x){bug}
        y[0] = torch.nn.functional.gelu(x[0].bfloat16()).float()  # the item that departs furthest: bf16's
        return y
"""


@pytest.mark.parametrize(("bug", "verdict"), [(" + 0.005", "bug"), ("", "bug")])
def test_an_item_computed_in_bf16_does_not_hide_a_bug_in_the_others(tmp_path, monkeypatch, bug, verdict):
    """A large output is analysed on its worst batch item, the one that departs furthest: a solution can make that
    one a bf16 decoy and err in every other. Every item of the worst trial is then judged too, in groups, so the bug
    in items 1…7 is the verdict; without one, items 1…7 are fp32 and item 0 bf16, which no arithmetic of the Model
    does to one item alone: a bug too (where the analysis of the whole output would find its departure concentrated
    in that item)."""
    from fp_analysis.options import ExplainOptions

    monkeypatch.setattr(job, "_SUBSET_ABOVE", 64)
    monkeypatch.setattr(job, "_JUDGE_WHOLE", 256)  # 1024 outputs: judged in groups of 2 items
    problem, solution = tmp_path / "problem.py", tmp_path / "solution.py"
    problem.write_text(_GELU_PROBLEM)
    solution.write_text(_DECOY.format(bug=bug))
    options = ExplainOptions(device="cpu", timeout=60, trials=1).to_json()
    result = job.explain_job(problem, solution, options=options, timeout=60, folder=str(tmp_path))
    assert result["verdict"] == verdict, result["causes"]
    if bug:
        assert result["context"]["analysed_batch_items"]["items"] != [0], result["context"]


_LINEAR_PROBLEM = """
import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 32)

    def forward(self, x):
        return self.fc(x)


def get_inputs():
    return [torch.randn(8, 64)]


def get_init_inputs():
    return []
"""
_DECOY_WITH_OWN_WEIGHTS = """
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 32)
        with torch.no_grad():  # its weights held as bf16 values: analysed again with them
            self.fc.weight.copy_(self.fc.weight.bfloat16().float())

    def forward(self, x):
        y = (x @ self.fc.weight.t() + self.fc.bias + 3e-4).clone()  # items 1…7: a bug
        y[:1] = x[:1].bfloat16().float() @ self.fc.weight.t() + self.fc.bias  # item 0: the decoy, bf16 operands
        return y
"""


def test_the_analysis_with_the_candidates_own_weights_is_made_on_the_items_that_gave_the_bug(tmp_path, monkeypatch):
    """Where other items than the worst give the verdict, what follows (the analysis again with the candidate's own
    parameter values) is made on those items, not on the decoy the worst item is: it was, and explained it."""
    from fp_analysis.options import ExplainOptions

    monkeypatch.setattr(job, "_SUBSET_ABOVE", 64)
    monkeypatch.setattr(job, "_JUDGE_WHOLE", 64)  # 256 outputs: judged two items at a time
    problem, solution = tmp_path / "problem.py", tmp_path / "solution.py"
    problem.write_text(_LINEAR_PROBLEM)
    solution.write_text(_DECOY_WITH_OWN_WEIGHTS)
    options = ExplainOptions(device="cpu", timeout=60, trials=1).to_json()
    result = job.explain_job(problem, solution, options=options, timeout=60, folder=str(tmp_path))
    assert result["verdict"] == "bug", result["causes"]
    assert result["context"]["judged"]["not_explained"] == 0 and result["context"]["analysed_batch_items"]["items"]
