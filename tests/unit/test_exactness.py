"""Where fp32 computes an op exactly in any order the floor gives it no error (``fp_analysis.model.exactness``), and
the trial on inputs of few bits (``fp_analysis.explain.exact_inputs``) is run where that makes every sum exact."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from fp_analysis.explain.exact_inputs import few_bits, order_free_inputs
from fp_analysis.model.exactness import exact_results, significant_bits
from fp_analysis.model.floor import floor_of
from fp_analysis.model.interpose import Arithmetic, evaluate

aten = torch.ops.aten


def _sequential_fp32(terms: torch.Tensor) -> torch.Tensor:
    total = torch.zeros((), dtype=torch.float32)
    for t in terms.float():
        total = total + t
    return total


def test_a_sum_is_exact_up_to_two_to_the_24_steps_of_its_grid_and_not_beyond():
    step = math.ldexp(1.0, -10)
    for ones, exact in ((1 << 13, True), ((1 << 14) + 1, False)):
        terms = torch.cat([torch.ones(ones), torch.tensor([step])]).double()
        mask = exact_results(aten.sum.default, "sum", (terms,), {}, terms.sum())
        assert (mask is not None and bool(mask.all())) is exact
        # the claim itself: a sequential fp32 order lands on the exact sum, or (beyond the bound) does not
        assert (float(_sequential_fp32(terms)) == float(terms.sum())) is exact


def test_random_values_are_not_exact_and_integer_matrices_are():
    x = torch.randn(64, 32, dtype=torch.float32).double()
    assert exact_results(aten.sum.dim_IntList, "sum", (x, [1]), {}, x.sum(1)) is None
    a = torch.randint(-3, 4, (16, 64)).double()
    b = torch.randint(-3, 4, (64, 8)).double()
    assert bool(exact_results(aten.mm.default, "mm", (a, b), {}, a @ b).all())
    assert exact_results(aten.mm.default, "mm", (x.T[:16], x[:, :8]), {}, x.T[:16] @ x[:, :8]) is None
    # TF32 operands of 3 significant bits are the same operands: still exact; of 12 bits, rounded: not
    assert bool(exact_results(aten.mm.default, "mm", (a, b), {}, a @ b, None, ("tf32", "rne")).all())
    wide = a + 2049.0
    assert exact_results(aten.mm.default, "mm", (wide, b), {}, wide @ b, None, ("tf32", "rne")) is None
    assert exact_results(aten.addmm.default, "addmm", (b[0], a, b), {"alpha": 2}, 2 * (a @ b) + b[0]) is None


def test_an_elementwise_result_is_exact_where_fp32_represents_it():
    x = torch.tensor([4097.0, 3.0, 0.5]).double()
    product = x * x  # 4097² = 2^24 + 2^13 + 1 needs 25 bits
    assert exact_results(aten.mul.Tensor, "mul", (x, x), {}, product).tolist() == [False, True, True]
    assert exact_results(aten.pow.Tensor_Scalar, "pow", (x, 2), {}, product).tolist() == [False, True, True]
    assert exact_results(aten.pow.Tensor_Scalar, "pow", (x, 3), {}, x**3) is None  # not a square
    tenth = x + 0.1  # 0.1 is no fp32 number: the sum is the double's, not fp32's
    assert exact_results(aten.add.Tensor, "add", (x, 0.1), {}, tenth) is None


def test_a_mean_is_never_exact_but_its_sum_may_be():
    x = torch.arange(1, 9).double()
    assert exact_results(aten.mean.default, "mean", (x,), {}, x.mean()) is None  # Welford's divides at every term
    assert bool(exact_results(aten.mean.default, "mean", (x,), {}, x.mean(), means=True).all())
    noisy = x + 2**-30
    assert exact_results(aten.mean.default, "mean", (noisy,), {}, noisy.mean(), means=True) is None


def test_significant_bits():
    assert significant_bits(torch.ones(3)) == 1
    assert significant_bits(torch.zeros(3)) == 0
    assert significant_bits(torch.tensor([3.0, -7.0, 0.5])) == 4  # 0.5 … 7: grid 2^-1, 7.5 < 2^3
    assert significant_bits(torch.tensor([1.0 + 2**-20])) == 21
    assert significant_bits(torch.tensor([0.1], dtype=torch.float64)) > 24  # not an fp32 number


class _MeanSquare(nn.Module):
    def forward(self, a, b):
        return ((a - b) ** 2).sum(dim=1)


def test_the_floor_of_sums_of_integers_is_the_least_and_of_random_values_is_not():
    generator = torch.Generator().manual_seed(0)
    a, b = torch.randn(4, 4096, generator=generator), torch.randn(4, 4096, generator=generator)
    whole = [t.round() for t in (a, b)]
    _, exact_sigma = floor_of(_MeanSquare(), whole)
    _, random_sigma = floor_of(_MeanSquare(), [a, b])
    assert float(exact_sigma.max()) < 1e-40  # only the underflow term: every order gives the same bits
    assert float((random_sigma / _MeanSquare()(a.double(), b.double())).min()) > 1e-8  # ~u·√n at least
    # under fast-math the square may be __powf's: no longer taken as exact
    _, fast_sigma = floor_of(_MeanSquare(), whole, base=Arithmetic(fast_math=True))
    assert float(fast_sigma.max()) > 1e-6


def test_few_bits_keeps_signs_zeros_and_order_on_a_power_of_two_grid():
    x = torch.sort(torch.cat([torch.zeros(3), torch.randn(997)])).values
    (rounded,) = few_bits([x], 4)
    assert torch.equal(torch.sign(rounded), torch.sign(x)) and bool((rounded[1:] >= rounded[:-1]).all())
    step = float(rounded.abs()[rounded != 0].min())
    assert math.log2(step).is_integer() and bool(((rounded / step) == (rounded / step).round()).all())
    assert len(torch.unique(rounded.abs())) <= 5  # 4 levels of the largest magnitude, and 0
    index = torch.tensor([1, 2])
    assert few_bits([index], 4)[0] is index  # not floating: as it is


class _Linear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 8)

    def forward(self, x):
        return self.fc(x)


class _Matmul(nn.Module):
    def forward(self, a, b):
        return a @ b


class _ScaledMatmul(nn.Module):
    def forward(self, a, b):
        return (a @ b) * 0.37  # a kernel may scale b first: its products are then inexact where the reference's are not


class _SoftmaxSum(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1).sum(dim=1)


@pytest.mark.parametrize(
    ("model", "inputs", "applies"),
    [
        (_Matmul(), [torch.randn(32, 64), torch.randn(64, 16)], True),
        (_Linear(), [torch.randn(32, 64)], False),  # random weights: no product with them is exact
        (_SoftmaxSum(), [torch.randn(8, 64)], False),  # a sum of exponentials never is
        (_ScaledMatmul(), [torch.randn(32, 64), torch.randn(64, 16)], False),  # one inexact op, foldable into the sums
    ],
)
def test_the_trial_applies_where_its_sums_can_be_exact(model, inputs, applies):
    with torch.no_grad():
        output = model(*inputs)
    rounded = order_free_inputs(model, inputs, output)
    assert (rounded is not None) is applies
    if applies:
        assert evaluate(model, rounded, Arithmetic(), record_exact=True).order_free
        assert len(torch.unique(rounded[0].abs())) > 5  # the finest rounding that is exact, not the coarsest


def test_the_trial_does_not_apply_to_an_index_output():
    x = torch.randn(8, 64)
    assert order_free_inputs(nn.Identity(), [x], torch.argmax(x, dim=1)) is None


class _Mean(nn.Module):
    def forward(self, x):
        return x.mean(dim=1)


class _MaskedMean(nn.Module):
    def forward(self, x):
        mask = x > 0
        return (x * mask).sum(1) / torch.sum(mask, dim=1, dtype=torch.float32)


class _SumInto(nn.Module):
    def forward(self, x):
        buffer = torch.empty(x.shape[0], dtype=x.dtype)
        torch.sum(x, 1, out=buffer)
        return buffer


def test_a_mean_of_integers_keeps_the_rounding_a_running_mean_has():
    x = torch.randint(-4, 5, (16, 256)).float()
    _, sigma = floor_of(_Mean(), [x])
    welford = torch.zeros(16)  # m += (x_i − m) / (i + 1): a division at every term, in fp32
    for i in range(256):
        welford = welford + (x[:, i] - welford) / (i + 1)
    departure = (welford.double() - x.double().mean(1)).abs()
    assert bool((departure <= 8 * sigma).all())  # the floor's multiple of σ holds it


def test_exactness_never_stops_an_evaluation_nor_writes_into_the_models_buffer():
    x = torch.randn(8, 64)
    centre, _ = floor_of(_MaskedMean(), [x])  # a bool mask summed as float32: no exactness, no failure
    assert torch.allclose(centre.output, _MaskedMean()(x.double()))
    centre, _ = floor_of(_SumInto(), [x])  # sum(out=buffer): Σ|x| must not land in the Model's buffer
    assert torch.allclose(centre.output, x.double().sum(1))


class _SortedCumsum(nn.Module):
    def forward(self, values, keys):
        return torch.gather(values, 1, torch.argsort(keys, 1)).cumsum(1)


def test_the_trial_does_not_apply_where_ties_would_decide():
    inputs = [torch.randn(4, 256), torch.randn(4, 256)]
    model = _SortedCumsum()
    assert order_free_inputs(model, inputs, model(*inputs)) is None  # which of equal keys comes first is free
