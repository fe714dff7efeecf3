"""``fpa tolerance --problem``'s computation (``fp_analysis.study.problem_tolerance.tolerance_of``) on small Models in
this process: the tolerance each precision of candidate needs, and the power of the check against placeholders."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from typer.testing import CliRunner

from fp_analysis.cli.app import app
from fp_analysis.errors import OutOfScopeError, ParameterError
from fp_analysis.numerics.rounding import round_to
from fp_analysis.study import problem_tolerance
from fp_analysis.study.problem_tolerance import KERNELBENCH_CHECK, ToleranceOptions, tolerance_of

PRECISIONS = ["fp32", "tf32", "bf16", "fp16"]


class Softmax(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


class MatMul(nn.Module):
    def forward(self, a, b):
        return a @ b


class FrobeniusNorm(nn.Module):
    """KernelBench level 1's Frobenius-norm normalisation: every output is tiny."""

    def forward(self, x):
        return x / torch.norm(x, p="fro")


class Relu(nn.Module):
    def forward(self, x):
        return torch.relu(x)


class Centred(nn.Module):
    """Mixes the batch: an item alone gives another output than its slice of the batch."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(16, 8)

    def forward(self, x):
        y = self.linear(x)
        return y - y.mean(0)


def _randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _placeholder(result, name):
    return next(p for p in result.power if p.name == name)


def test_every_precision_has_a_row_of_the_table():
    result = tolerance_of(Softmax(), [_randn(16, 64)])
    assert [n.precision for n in result.needed] == PRECISIONS
    assert result.row("fp32").emulations == ("plain",)
    assert result.row("tf32").emulations == ("tf32[all]", "tf32~rna[all]")
    assert result.row("bf16").emulations == ("bf16[all]", "autocast_bf16")


def test_softmax_needs_an_fp32_floor_only_and_its_reduced_rows_round_nothing():
    result = tolerance_of(Softmax(), [_randn(16, 64)])
    fp32 = result.row("fp32")
    assert 0 < fp32.atol < 1e-5 and fp32.rtol == 0.0 and fp32.passes_check
    assert all(result.row(p).rounds_nothing for p in ("tf32", "bf16", "fp16"))  # no linear op to round
    assert any("round nothing" in note for note in result.notes)
    assert not result.blind  # softmax of randn over 64: max ≈ 0.3, far from zeros or the mean 1/64


def test_layernorm_needs_more_than_its_own_rounding_but_passes_kernelbench():
    result = tolerance_of(nn.LayerNorm(128), [_randn(32, 128)])
    fp32 = result.row("fp32")
    assert fp32.max_difference < fp32.atol < 1e-4  # the floor is wider than the reference's own distance to fp64
    assert all(n.passes_check for n in result.needed)
    assert _placeholder(result, "zeros").passes is False and not result.blind


def test_matmul_rows_grow_with_the_format_and_hold_what_such_kernels_compute():
    a, b = _randn(32, 256, seed=1), _randn(256, 48, seed=2)
    result = tolerance_of(MatMul(), [a, b])
    atol = {n.precision: n.atol for n in result.needed}
    assert atol["fp32"] < atol["tf32"] < atol["bf16"] and atol["fp16"] < atol["bf16"]
    assert not any(n.rounds_nothing for n in result.needed)
    reference = a @ b
    # what a TF32 kernel (operands to TF32 with ties away, as __float_to_tf32; exact sum) and a bf16 kernel compute
    tf32 = (round_to(a, "tf32", "rna").double() @ round_to(b, "tf32", "rna").double()).float()
    bf16 = (a.bfloat16() @ b.bfloat16()).float()
    assert atol["fp32"] < (tf32 - reference).abs().max() <= atol["tf32"]
    assert atol["tf32"] < (bf16 - reference).abs().max() <= atol["bf16"]
    assert _placeholder(result, "first input").why_not.startswith("n/a: shape differs")


def test_zeros_pass_kernelbench_check_on_a_frobenius_normalisation_whose_outputs_are_tiny():
    x = torch.rand(4, 128, 128, generator=torch.Generator().manual_seed(3))  # max |y| ≈ 1/(0.58·256) < 1e-2
    result = tolerance_of(FrobeniusNorm(), [x])
    zeros = _placeholder(result, "zeros")
    assert result.reference["max_abs"] < KERNELBENCH_CHECK[0]
    assert zeros.passes is True and result.blind
    assert zeros.atol_accepting == pytest.approx(result.reference["max_abs"])  # rtol scales |zeros| = 0
    tighter = tolerance_of(FrobeniusNorm(), [x], atol=1e-3, rtol=1e-2)
    assert _placeholder(tighter, "zeros").passes is False


def test_no_placeholder_passes_a_relu_of_randn():
    result = tolerance_of(Relu(), [_randn(64, 128)])
    assert [p.passes for p in result.power] == [False, False, False] and not result.blind
    assert _placeholder(result, "first input").why_not is None  # same shape: held against the check


def test_rtol_scales_the_candidate_as_kernelbench_calls_allclose():
    """torch.allclose(reference, candidate): |reference − candidate| ≤ atol + rtol·|candidate|, so no rtol lets
    zeros through where |reference| > atol."""
    x = torch.rand(4, 128, 128, generator=torch.Generator().manual_seed(3))
    result = tolerance_of(FrobeniusNorm(), [x], atol=0.0, rtol=10.0)
    assert _placeholder(result, "zeros").passes is False


def test_the_rtol_at_the_checks_atol_is_zero_where_the_atol_suffices_and_positive_where_not():
    a, b = _randn(8, 64, seed=4), _randn(64, 16, seed=5)
    loose = tolerance_of(MatMul(), [a, b], atol=1.0, rtol=0.0)
    assert all(n.rtol == 0.0 and n.passes_check for n in loose.needed)
    bf16_atol = loose.row("bf16").atol
    tight = tolerance_of(MatMul(), [a, b], atol=bf16_atol / 10, rtol=0.0)
    row = tight.row("bf16")
    assert not row.passes_check and (row.rtol is None or row.rtol > 0)


def test_with_atol_0_the_rtol_needed_passes_a_bf16_kernel_within_a_few_times_its_error():
    """Outputs far from 0 (a product of positive operands): with atol 0 the bf16 row needs a finite rtol, under which
    torch.allclose(reference, a bf16 kernel's output) passes, and which the kernel's own relative error does not
    fall short of by more than the margin and the floor (×10)."""
    g = torch.Generator().manual_seed(6)
    a, b = torch.rand(8, 64, generator=g), torch.rand(64, 16, generator=g)
    row = tolerance_of(MatMul(), [a, b], atol=0.0, rtol=0.0).row("bf16")
    reference, kernel = a @ b, (a.bfloat16() @ b.bfloat16()).float()
    assert row.rtol is not None and not row.passes_check  # rtol 0 with atol 0: nothing but bitwise equality passes
    assert torch.allclose(reference, kernel, atol=0.0, rtol=row.rtol)
    assert row.rtol < 10 * ((reference - kernel).abs() / kernel.abs()).max()


def test_a_large_output_is_measured_on_one_batch_item_where_items_are_independent(monkeypatch):
    monkeypatch.setattr(problem_tolerance, "_SUBSET_ABOVE", 64)
    linear = nn.Linear(16, 8)
    result = tolerance_of(linear, [_randn(12, 16)])
    assert result.analysed == {"batch_item": 0, "of": 12, "outputs": 8}
    assert result.shape == (12, 8) and any("batch item 0 of 12" in note for note in result.notes)


def test_a_large_output_of_a_model_that_mixes_its_batch_is_measured_on_an_item_of_the_whole_models_output(monkeypatch):
    """Batch items not apart (a norm over the whole tensor): the Model runs whole, item 0 of its output is measured —
    the same tolerances as measuring it whole, but for the outputs left out of the maximum."""
    x = torch.rand(6, 32, 16, generator=torch.Generator().manual_seed(8))
    whole = tolerance_of(FrobeniusNorm(), [x])
    monkeypatch.setattr(problem_tolerance, "_SUBSET_ABOVE", 64)
    kept = tolerance_of(FrobeniusNorm(), [x])
    assert kept.analysed == {"batch_item": 0, "of": 6, "outputs": 512, "whole_model": True}
    assert any("the whole Model is evaluated each time" in note for note in kept.notes)
    for precision in PRECISIONS:
        assert 0 < kept.row(precision).atol <= whole.row(precision).atol * 1.01
        assert kept.row(precision).atol >= whole.row(precision).atol / 3
    mixed = tolerance_of(Centred(), [_randn(12, 16)])
    assert mixed.analysed == {"batch_item": 0, "of": 12, "outputs": 8, "whole_model": True}


def test_a_model_that_draws_random_numbers_is_out_of_scope():
    with pytest.raises(OutOfScopeError, match="draws random numbers"):
        tolerance_of(nn.Dropout(0.5), [_randn(4, 8)])


class Argmax(nn.Module):
    def forward(self, x):
        return torch.argmax(x, dim=1)


def test_an_index_output_has_no_tolerance_and_says_it_is_compared_exactly():
    with pytest.raises(OutOfScopeError, match=r"compared exactly, so no tolerance applies \(atol 0\)"):
        tolerance_of(Argmax(), [_randn(4, 8)])


def test_options_are_checked_when_made():
    assert ToleranceOptions().atol == 1e-2 and ToleranceOptions().seed == 42
    with pytest.raises(ParameterError, match="atol"):
        ToleranceOptions(atol=-1.0)
    with pytest.raises(ParameterError, match="device"):
        ToleranceOptions(device="tpu")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["tolerance"], "neither was given"),
        (["tolerance", "conv3d_kk1", "--problem", "p.py"], "both were given"),
        (["tolerance", "conv3d_kk1", "--atol", "0.1"], "Got --atol with OP"),
        (["tolerance", "--problem", "p.py", "--mode", "bf16"], "Got --mode with --problem"),
    ],
)
def test_the_command_takes_exactly_one_of_op_and_problem(args, message):
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and message in result.stderr
    assert "OP" in result.stderr and "--problem" in result.stderr
