"""Level-3 networks of the family suite at KernelBench's own sizes (the suite runs them reduced; these take seconds).

KernelBench's level 3 MLPs (an input of 1000 through [400, 800] to 500; a deep narrow one through eight layers of 50)
and LeNet-5 on one 32 × 32 image: the reference itself is ``identical``, one output 1e-3 of the largest off is a
``bug`` located there, and the Linears and convs on TF32 operands are ``candidate_tf32``. The recurrent networks at
KernelBench's size (an LSTM of 6 layers over 512 steps) take minutes per analysis on a CPU, op by op: they stay
reduced (tests/unit/test_families.py).
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from fp_analysis.model.engine import Effort, analyse_model

from ..family_suite import BY_NAME, load
from .test_families import _FOLDER, _tf32_candidate

_LENET = dataclasses.replace(
    BY_NAME["lenet"],
    name="lenet_full",
    forward="x = F.max_pool2d(F.relu(self.conv1(x)), kernel_size=2, stride=2)\n"
    "x = F.max_pool2d(F.relu(self.conv2(x)), kernel_size=2, stride=2)\n"
    "x = x.view(x.size(0), -1)\nx = F.relu(self.fc1(x))\nx = F.relu(self.fc2(x))\nreturn self.fc3(x)",
    inputs="return [torch.randn(1, 1, 32, 32)]",
    layers="self.conv1 = nn.Conv2d(1, 6, kernel_size=5)\nself.conv2 = nn.Conv2d(6, 16, kernel_size=5)\n"
    "self.fc1 = nn.Linear(16 * 5 * 5, 120)\nself.fc2 = nn.Linear(120, 84)\nself.fc3 = nn.Linear(84, num_classes)",
)
FULL = [
    dataclasses.replace(BY_NAME["mlp"], name="mlp_full", inputs="return [torch.randn(1, 1000)]",
                        init_values="[1000, [400, 800], 500]"),
    dataclasses.replace(BY_NAME["mlp"], name="mlp_deep_narrow_full", inputs="return [torch.randn(1, 1000)]",
                        init_values="[1000, [50] * 8, 10]"),
    _LENET,
]  # fmt: skip


@pytest.mark.parametrize("family", FULL, ids=[f.name for f in FULL])
def test_a_full_size_network_gets_its_verdicts(family):
    module = load(family, _FOLDER)
    torch.manual_seed(0)
    model = module.Model(*module.get_init_inputs())
    torch.manual_seed(1)
    inputs = module.get_inputs()
    with torch.no_grad():
        reference = model(*inputs)
        tf32 = _tf32_candidate(model, inputs)
    effort = Effort(runs=4)
    assert analyse_model(model, inputs, reference, reference.clone(), effort=effort).verdict == "identical"
    off = reference.clone()
    off.view(-1)[7] += 1e-3 * float(reference.abs().max())
    bug = analyse_model(model, inputs, reference, off, effort=effort)
    assert bug.verdict == "bug" and bug.location["bad"] == 1, bug.causes[0].evidence
    assert "candidate_tf32" in analyse_model(model, inputs, reference, tf32, effort=effort).verdict.split(" + ")
