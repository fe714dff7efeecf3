"""CUDA autocast re-created op by op (``fp_analysis.model.autocast``): which results are held in the reduced format,
checked on each op's output of an evaluation, and against real CPU autocast where the two run alike."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from fp_analysis.model.interpose import Arithmetic, evaluate
from fp_analysis.numerics.rounding import round_to


class Chain(nn.Module):
    """conv → ReLU → + an fp32 parameter → BatchNorm → softmax: each kind of op autocast treats apart (the first
    add's result is fp32, the last one's too: softmax's result is fp32)."""

    def __init__(self):
        super().__init__()
        self.conv, self.norm = nn.Conv2d(3, 6, 3), nn.BatchNorm2d(6)
        self.shift = nn.Parameter(torch.randn(6, 1, 1))

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return torch.softmax(self.norm(y + self.shift), dim=1) + torch.relu(self.conv(x))


def in_format(t: torch.Tensor, fmt: str) -> bool:
    return torch.equal(round_to(t.float(), fmt).to(t.dtype), t)


@pytest.mark.parametrize("fmt", ["bf16", "fp16"])
def test_each_op_holds_its_result_in_the_format_as_autocast_would(fmt):
    torch.manual_seed(0)
    model = Chain().eval()
    run = evaluate(model, [torch.randn(2, 3, 8, 8)], Arithmetic(autocast=fmt), keep_outputs=True)
    held = [(o.name, in_format(run.trace[o.index], fmt)) for o in run.ops if o.index in run.trace]
    first = dict(reversed(held))  # each op's first occurrence
    assert first["convolution"] and first["relu"]  # a lower-precision op, and one on its result alone
    assert not first["add"]  # + an fp32 parameter promotes to fp32
    assert not first["_softmax"]  # on autocast's fp32 list


def test_batch_norm_returns_its_inputs_format_whatever_its_parameters():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 6, 3), nn.BatchNorm2d(6)).eval()
    run = evaluate(model, [torch.randn(2, 3, 8, 8)], Arithmetic(autocast="bf16"))
    assert any("batch_norm" in o.name for o in run.ops) and in_format(run.output, "bf16")


def test_a_conv_relu_linear_model_is_real_cpu_autocast_but_where_a_rounding_goes_the_other_way():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(4, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 6 * 6, 16)).eval()
    x = torch.randn(8, 4, 8, 8)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        real = model(x).float()
    recreated = evaluate(model, [x], Arithmetic(autocast="bf16")).output
    assert in_format(recreated, "bf16")
    same = (real.double() == recreated).double().mean()
    assert same > 0.9, (
        same
    )  # fp32 sums in another order than fp64's: a rounding to bf16 now and then goes the other way


def test_a_whole_model_in_bf16_is_real_cpu_bfloat16_but_where_a_rounding_goes_the_other_way():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(4, 8, 3), nn.GroupNorm(2, 8), nn.SiLU(), nn.Flatten(), nn.Linear(8 * 6 * 6, 16))
    x = torch.randn(8, 4, 8, 8)
    with torch.no_grad():
        real = copy.deepcopy(model).bfloat16()(x.bfloat16()).float()
    recreated = evaluate(model.eval(), [x], Arithmetic(autocast="bf16", whole=True)).output
    assert in_format(recreated, "bf16")  # every result in bf16, the norm's and the SiLU's too (no fp32 list)
    same = (real.double() == recreated).double().mean()
    assert same > 0.9, same
