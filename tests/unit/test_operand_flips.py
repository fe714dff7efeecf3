"""Operands a kernel may round the other way (``fp_analysis.model.operand_flips``): which operands lie near enough a
rounding boundary, what their flips move a linear op's output by, and what that does to a TF32 candidate of a
Model with a computed operand (an MLP's hidden activation), which the floor once called a bug."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from fp_analysis.model.engine import Effort, analyse_model
from fp_analysis.model.interpose import Arithmetic, evaluate
from fp_analysis.model.operand_flips import exact_storages, flip_effect

_ADDMM = torch.ops.aten.addmm.default
_TF32_SPACING_AT_1 = 2.0**-10  # 10 stored fraction bits: the spacing of TF32 in [1, 2)


def test_only_operands_near_a_boundary_of_the_format_may_flip():
    """An operand just below the midpoint between two TF32 neighbours of 1 flips within its window; one a quarter of
    a spacing from any boundary does not; each flip moves every output it reaches by the spacing times the other
    operand's magnitude."""
    midpoint = 1.0 + _TF32_SPACING_AT_1 / 2
    x = torch.tensor([[midpoint - 2.0**-23, 1.0 + _TF32_SPACING_AT_1 / 4]], dtype=torch.float64)
    w = torch.tensor([[2.0, -3.0], [0.5, 1.0]], dtype=torch.float64)
    bias = torch.zeros(2, dtype=torch.float64)
    moved = flip_effect(_ADDMM, (bias, x, w), {}, "tf32", "rne", exact_storages([w, bias]), 8.0)
    assert torch.equal(moved, torch.tensor([[2.0, 3.0]], dtype=torch.float64) * _TF32_SPACING_AT_1)
    far = torch.tensor([[1.0 + _TF32_SPACING_AT_1 / 4] * 2], dtype=torch.float64)
    assert flip_effect(_ADDMM, (bias, far, w), {}, "tf32", "rne", exact_storages([w, bias]), 8.0) is None


def test_an_operand_the_kernel_reads_as_we_do_never_flips():
    """The Model's inputs and parameters (and views of them) are the same fp32 values in a kernel: no window."""
    midpoint = 1.0 + _TF32_SPACING_AT_1 / 2
    x = torch.full((1, 2), midpoint - 2.0**-23, dtype=torch.float64)
    w = torch.eye(2, dtype=torch.float64)
    bias = torch.zeros(2, dtype=torch.float64)
    assert flip_effect(_ADDMM, (bias, x, w.t()), {}, "tf32", "rne", exact_storages([x, w, bias]), 8.0) is None


def test_a_recorded_operand_is_judged_by_how_far_the_noise_moved_it():
    """Where the run without noise recorded the operand, the window is how far the noise moved it, over the noise's
    amplitude (one error's size): an operand ten fp32 spacings from a boundary may flip where the noise (at 8 times)
    moved it 150, not where it stayed put."""
    midpoint = 1.0 + _TF32_SPACING_AT_1 / 2
    centre = torch.tensor([[midpoint - 10 * 2.0**-23]], dtype=torch.float64)
    w, bias = torch.ones(1, 1, dtype=torch.float64), torch.zeros(1, dtype=torch.float64)
    exact = exact_storages([w, bias])
    moved_far = centre - 150 * 2.0**-23  # away from the boundary: the window, not the direction, decides
    assert flip_effect(_ADDMM, (bias, moved_far, w), {}, "tf32", "rne", exact, 8.0, {1: centre}) is not None
    assert flip_effect(_ADDMM, (bias, centre.clone(), w), {}, "tf32", "rne", exact, 8.0, {1: centre}) is None


class _MLP(nn.Module):
    """Linear → LayerNorm → GELU → Linear: the second product's operand is computed, so a kernel's fp32 value of it
    may round to TF32 the other way from the re-creation's."""

    def __init__(self):
        super().__init__()
        self.fc1, self.ln, self.fc2 = nn.Linear(32, 64), nn.LayerNorm(64), nn.Linear(64, 16)

    def forward(self, x):
        return self.fc2(nn.functional.gelu(self.ln(self.fc1(x))))


@pytest.mark.parametrize("seed", range(4))
def test_a_tf32_mlp_is_named_tf32_and_a_small_bug_in_one_row_of_it_is_a_bug(seed):
    torch.manual_seed(seed)
    model, x = _MLP(), torch.randn(32, 32)
    with torch.no_grad():
        reference = model(x)
        candidate = evaluate(model, [x], Arithmetic(dtype=torch.float32, linear_format="tf32")).output
    analysis = analyse_model(model, [x], reference, candidate, effort=Effort(runs=4))
    assert analysis.verdict == "candidate_tf32", [c.evidence for c in analysis.causes]
    buggy = candidate.clone()
    buggy[5] += 1e-5  # a twentieth of what TF32 moves these outputs by, in one batch item
    analysis = analyse_model(model, [x], reference, buggy, effort=Effort(runs=4))
    assert analysis.verdict == "bug" and set(analysis.location["batch_items"]) == {5}, analysis.location
