"""Reduced precision as frameworks do it: a reference mode names each op kind's precision (cuDNN's TF32 switch for
convolutions, cuBLAS's for matrix products), the engine re-creates each kind apart, and a TF32 re-creation that fp16
gives bit for bit too says so rather than guessing."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from fp_analysis.errors import ParameterError
from fp_analysis.model.engine import Effort, analyse_model
from fp_analysis.model.interpose import evaluate, interposed, precision_mode
from fp_analysis.numerics.rounding import round_to
from fp_analysis.options import linear_formats


class ConvThenLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.fc = nn.Conv2d(4, 8, 3), nn.Linear(8 * 6 * 6, 16)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).flatten(1))


torch.manual_seed(0)
MODEL, X = ConvThenLinear().eval(), torch.randn(4, 4, 8, 8)


@pytest.mark.parametrize(
    ("mode", "formats"),
    [
        ("fp32", {"conv": "fp32", "matmul": "fp32"}),
        ("tf32", {"conv": "tf32", "matmul": "fp32"}),  # cuDNN's default; cuBLAS keeps fp32 unless told
        ("bf16", {"conv": "bf16", "matmul": "bf16"}),
        ("conv=tf32,matmul=tf32", {"conv": "tf32", "matmul": "tf32"}),
        ("matmul=tf32", {"conv": "fp32", "matmul": "tf32"}),
    ],
)
def test_a_reference_mode_names_each_op_kinds_precision(mode, formats):
    assert linear_formats(mode) == formats


@pytest.mark.parametrize("mode", ["tf16", "conv=tf32,matmul", "gemm=tf32", ""])
def test_a_bad_reference_mode_names_what_is_allowed(mode):
    with pytest.raises(ParameterError, match="conv=FMT,matmul=FMT"):
        linear_formats(mode)


def test_each_kind_is_rounded_apart():
    with interposed(precision_mode("matmul=tf32")) as only_matmul:
        MODEL(X)
    assert only_matmul.rounded == 1  # the Linear, not the conv
    with interposed(precision_mode("conv=tf32,matmul=tf32")) as both:
        MODEL(X)
    assert both.rounded == 2


def test_a_reference_with_cublas_tf32_alone_is_recreated_on_its_matrix_products():
    reference = evaluate(MODEL, [X], precision_mode("matmul=tf32")).output
    candidate = MODEL(X).detach()
    analysis = analyse_model(MODEL, [X], reference, candidate, effort=Effort(runs=2))
    assert analysis.verdict == "reference_tf32" and analysis.recreations["reference"] == "tf32[matmul]"
    assert "matrix product" in analysis.causes[0].op or "Linear" in analysis.causes[0].op


def test_a_tf32_candidate_that_fp16_recreates_bit_for_bit_is_named_once_and_says_so():
    generator = torch.Generator().manual_seed(1)
    x = torch.rand(16, 64, generator=generator) + 0.5  # every operand a normal fp16 number: TF32 and fp16 round alike
    linear = nn.Linear(64, 32)
    with torch.no_grad():
        linear.weight.copy_(torch.rand(32, 64, generator=generator) * 0.2 + 0.05)
    with torch.no_grad():
        candidate = nn.functional.linear(round_to(x, "tf32"), round_to(linear.weight, "tf32"), linear.bias)
        reference = linear(x)
    analysis = analyse_model(linear, [x], reference, candidate, effort=Effort(runs=2))
    assert analysis.verdict == "candidate_tf32"
    assert "fp16 re-creates it bit for bit too" in analysis.causes[0].evidence
