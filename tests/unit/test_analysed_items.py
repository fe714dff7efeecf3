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
