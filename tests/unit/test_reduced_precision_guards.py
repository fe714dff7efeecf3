"""What a reduced-precision re-creation may not hold: its floor is wide (every result's rounding to bf16 under
autocast, the tensor cores' accumulation), so an adversary's candidate that copies a few of its outputs and returns
anything elsewhere (zeros, an fp32 result with a wrong bias) must not be named bf16 arithmetic. Found by an
adversarial hunt on a matrix product with K = 2048, where the tensor-core allowance (K/8) was counted in the
format's units and held any output."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from fp_analysis.model.engine import Effort, analyse_model


class _Matmul(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


def _autocast_bf16(a, b):
    """The product as autocast computes it: bf16 operands, exact products summed, the result rounded to bf16."""
    return (a.bfloat16().double() @ b.bfloat16().double()).float().bfloat16().float()


def _zeros_but_one(a, b):
    out = torch.zeros(a.shape[0], b.shape[1])
    out[0, 0] = _autocast_bf16(a, b)[0, 0]
    return out


def _wrong_bias_with_a_few_copied(a, b):
    """fp32 plus 0.05 (below bf16's half-spacing at these outputs), the 5 % of outputs furthest from the bf16 result
    replaced by it: agreeing with bf16 at more outputs than plain fp32 does."""
    out, bf16 = a @ b + 0.05, _autocast_bf16(a, b)
    far = ((out - bf16).abs() / (bf16.abs() * 2.0**-9 + 1e-3)).flatten().topk(out.numel() // 20).indices
    out.view(-1)[far] = bf16.view(-1)[far]
    return out


@pytest.fixture(scope="module")
def product():
    torch.manual_seed(0)
    a, b = torch.randn(64, 2048), torch.randn(2048, 32)
    with torch.no_grad():
        return a, b, _Matmul()(a, b)


@pytest.mark.parametrize(
    ("make", "verdict"),
    [(_autocast_bf16, "candidate_bf16"), (_zeros_but_one, "bug"), (_wrong_bias_with_a_few_copied, "bug")],
)
def test_only_bf16_arithmetic_is_named_bf16(product, make, verdict):
    a, b, reference = product
    analysis = analyse_model(_Matmul(), [a, b], reference, make(a, b), effort=Effort(runs=4))
    assert analysis.verdict == verdict, [c.evidence for c in analysis.causes]


def test_an_autocast_candidates_tolerance_is_its_arithmetics_not_k_eighths_of_bf16s(product):
    """The atol recommended against a bf16 candidate is its spread from the reference and the floor's 8 roundings to
    bf16 of the largest result, both sides' (``compare.tolerance``), not K/8 = 256 of them (it was 278 here)."""
    a, b, reference = product
    analysis = analyse_model(_Matmul(), [a, b], reference, _autocast_bf16(a, b), effort=Effort(runs=4))
    spread = float((_autocast_bf16(a, b) - reference).abs().max())
    rounding = 2.0**-8 * float(reference.abs().max())  # bf16's unit roundoff at the largest output
    assert analysis.recommended_tolerance["atol"] <= 1.5 * spread + 2 * 8 * rounding, analysis.recommended_tolerance


@pytest.mark.parametrize("fmt", ["bf16", "fp16"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_grid_share_is_the_share_round_to_keeps(fmt, dtype):
    """``grid_share`` tests membership by torch's own conversion; it must count what rounding to the format (our
    reference rounding, ``round_to``) leaves unchanged: on-grid values, ties, subnormals of the format, values past its
    largest finite one, signed zeros."""
    from fp_analysis.model.judge import grid_share
    from fp_analysis.numerics.rounding import round_to

    gen = torch.Generator().manual_seed(3)
    scales = torch.tensor([2.0**-30, 2.0**-20, 2.0**-14, 1e-3, 1.0, 1e3, 6e4, 7e4, 1e38], dtype=torch.float64)
    raw = (torch.randn(9, 400, generator=gen, dtype=torch.float64) * scales[:, None]).flatten()
    on_grid = round_to(raw.to(dtype), fmt)
    step = 2.0 ** -(7 if fmt == "bf16" else 10)  # a·step is one to two of the format's spacings at a (normal a)
    above = round_to(on_grid + on_grid * step, fmt, "rz")  # the format's next value away from zero
    ties = (on_grid + above) / 2  # exact in fp32 and fp64: midpoints between neighbours of the format
    values = torch.cat([raw.to(dtype), on_grid, ties, torch.tensor([0.0, -0.0, torch.inf], dtype=dtype)])
    finite = values[torch.isfinite(values)]
    expected = float((round_to(finite, fmt) == finite).double().mean())
    assert 0.2 < expected < 0.9  # the case mixes both kinds
    assert grid_share(values, fmt) == expected


class _LinearRowSum(nn.Module):
    """A Linear summed over its features, one output per row: the reduction of a held-out logsumexp chain."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(256, 128)

    def forward(self, x):
        return self.linear(x).sum(dim=1, keepdim=True)


def _shifted(model, x):
    """fp32, then +2e-3 at every output (2e-4 of their size, a reduced format's rounding, but the same at each)."""
    return model(x) + 2e-3


def _shifted_one_copied(model, x):
    """The same, but for one output copied from the Model under bf16 autocast: it agrees with that re-creation at
    fp32's resolution at one output more than with plain fp32 (``judge.unlike_reduced`` lets it through)."""
    out = _shifted(model, x)
    out[0] = _under_autocast(torch.bfloat16)(model, x)[0]
    return out


def _under_autocast(dtype):
    def run(model, x):
        with torch.autocast("cpu", dtype=dtype):
            return model(x).float()

    return run


def _bf16_operands_fp32_results(model, x):
    """A kernel that rounds its operands to bf16 and keeps every result in fp32 (autocast rounds them too)."""
    w, b = model.linear.weight, model.linear.bias
    return (x.bfloat16().float() @ w.bfloat16().float().T + b.bfloat16().float()).sum(dim=1, keepdim=True)


@pytest.mark.parametrize(
    ("make", "verdict"),
    [
        (_shifted, "bug"),
        (_shifted_one_copied, "bug"),
        (_under_autocast(torch.bfloat16), "candidate_bf16"),
        (_under_autocast(torch.float16), "candidate_fp16"),
        (_bf16_operands_fp32_results, "candidate_bf16"),
    ],
)
def test_a_departure_the_same_at_every_output_is_not_a_reduced_precision(make, verdict):
    """A reduced format's rounding varies from output to output; a constant added to every output does not, however
    well it fits bf16's or fp16's wide floor (``judge.unlike_size``)."""
    torch.manual_seed(1)
    model, x = _LinearRowSum(), torch.randn(16, 256)
    with torch.no_grad():
        reference, candidate = model(x), make(model, x)
    analysis = analyse_model(model, [x], reference, candidate, effort=Effort(runs=4))
    assert analysis.verdict == verdict, [c.evidence for c in analysis.causes]
