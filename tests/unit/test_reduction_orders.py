"""The sums' and products' named orders (``fp_analysis.model.reduction_orders``): bit for bit the terms-level orders of
the core (``numerics.orders`` with unit weights) and of fp32 loops, and what they do to a Model the engine explains."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from fp_analysis.model.engine import Effort, analyse_model
from fp_analysis.model.interpose import Arithmetic, Noise, evaluate
from fp_analysis.model.reduction_orders import (
    ordered_cumprod,
    ordered_cumsum,
    ordered_prod,
    ordered_sum,
    product_error_scale,
    sequential_error_scale,
    sequential_product,
)
from fp_analysis.numerics.orders import AccumulationSpec, accumulate


def _rows(seed: int, shape=(7, 301)) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=generator) * torch.rand(shape, generator=generator) * 1e3


@pytest.mark.parametrize(("order", "spec"), [("sequential", AccumulationSpec("sequential")),
                                             ("pairwise", AccumulationSpec("tree", block=1))])  # fmt: skip
def test_orders_are_the_cores_orders_bit_for_bit(order, spec):
    x = _rows(0)
    ours = ordered_sum(x, [1], False, order).numpy()
    core = accumulate(np.ones_like(x.numpy()), x.numpy(), spec)  # fma(1, x, acc) rounds once, as x + acc does
    assert np.array_equal(ours.view(np.uint32), core.view(np.uint32))


def test_a_thread_block_reduction_is_strided_sums_then_a_halving_tree():
    x = _rows(1, (3, 1000))
    threads = 256
    expected = []
    for row in x:
        partial = [np.float32(0)] * threads
        for k, value in enumerate(row.numpy()):
            partial[k % threads] = np.float32(partial[k % threads] + value)
        size = threads
        while size > 1:
            size //= 2
            partial = [np.float32(partial[i] + partial[i + size]) for i in range(size)]
        expected.append(partial[0])
    ours = ordered_sum(x, [1], False, "threads256").numpy()
    assert np.array_equal(ours.view(np.uint32), np.array(expected, np.float32).view(np.uint32))


def test_a_naive_matrix_product_is_the_cores_fused_sequential_chain_bit_for_bit():
    generator = torch.Generator().manual_seed(3)
    a = torch.randn(2, 5, 257, generator=generator) * 10 ** torch.randint(-3, 4, (2, 5, 257), generator=generator)
    b = torch.randn(257, 6, generator=generator)  # broadcast over a's batch, as torch.matmul does
    ours = sequential_product(a, b).numpy()
    w = a.numpy()[:, :, None, :].repeat(6, axis=2).reshape(-1, 257)
    x = np.broadcast_to(b.numpy().T[None, None], (2, 5, 6, 257)).reshape(-1, 257)
    core = accumulate(w, x, AccumulationSpec("sequential", contraction="fma")).reshape(2, 5, 6)
    assert np.array_equal(ours.view(np.uint32), core.view(np.uint32))


def test_a_sequential_cumsum_is_each_prefix_plus_the_next_term():
    x = _rows(2, (4, 50))
    ours = ordered_cumsum(x, 1)
    for k in range(1, 50):
        assert torch.equal(ours[:, k], ours[:, k - 1] + x[:, k])


def test_the_any_order_allowance_is_the_partial_sums_root_sum_of_squares():
    x = torch.rand(2, 5, dtype=torch.float64)
    partial = x.cumsum(1)
    assert torch.allclose(sequential_error_scale("sum", x, [1], False), (partial**2).sum(1).sqrt())
    assert torch.allclose(sequential_error_scale("mean", x, [1], True), (partial**2).sum(1, keepdim=True).sqrt() / 5)
    assert torch.allclose(sequential_error_scale("cumsum", x, [1], False), (partial**2).cumsum(1).sqrt())


class _Sum(nn.Module):
    def forward(self, x):
        return x.sum(dim=1)


def test_a_sum_carries_u_times_the_sum_of_magnitudes_in_the_floor():
    x = torch.randn(4, 1000, dtype=torch.float64)
    centre = evaluate(_Sum(), [x], Arithmetic()).output
    noise = Noise(torch.Generator().manual_seed(0), {}, sign=1)
    moved = evaluate(_Sum(), [x], Arithmetic(noise=noise)).output
    expected = math.ldexp(1.0, -24) * x.abs().sum(1)  # one rounding error of the sum's size, not of |result|
    assert torch.allclose(moved - centre, expected, rtol=1e-6)


def test_a_sequential_sum_of_a_long_row_is_named_by_its_order():
    torch.manual_seed(0)
    x = torch.rand(8, 65536)
    reference = _Sum()(x)
    plain = analyse_model(_Sum(), [x], reference, ordered_sum(x.double(), [1], False, "pairwise").float(),
                          effort=Effort(runs=4))  # fmt: skip
    assert plain.verdict == "accumulation_order"
    sequential = ordered_sum(x, [1], False, "sequential")
    analysis = analyse_model(_Sum(), [x], reference, sequential, effort=Effort(runs=4))
    assert analysis.verdict == "accumulation_order", analysis.causes[0].evidence
    assert analysis.recreations["candidate"] == "order_sequential"
    lost = sequential.clone()
    lost[3] -= x[3, 100]  # one term never added: a bug, not an order
    assert analyse_model(_Sum(), [x], reference, lost, effort=Effort(runs=4)).verdict == "bug"


def _near_one(seed: int, shape=(5, 300)) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.rand(shape, generator=generator) * 0.5 + 0.75


def _fp32_product(values, threads: int | None = None) -> np.float32:
    """A row's product as fp32 loops compute it: one accumulator (``threads`` None), or every ``threads``-th term per
    thread then a halving tree."""
    if threads is None:
        acc = np.float32(1)
        for value in values:
            acc = np.float32(acc * value)
        return acc
    partial = [np.float32(1)] * threads
    for k, value in enumerate(values):
        partial[k % threads] = np.float32(partial[k % threads] * value)
    while threads > 1:
        threads //= 2
        partial = [np.float32(partial[i] * partial[i + threads]) for i in range(threads)]
    return partial[0]


def _fp32_tree_product(values) -> np.float32:
    """Adjacent pairs multiplied level by level, an odd last one moving up unchanged."""
    level = [np.float32(v) for v in values]
    while len(level) > 1:
        paired = [np.float32(level[i] * level[i + 1]) for i in range(0, len(level) - 1, 2)]
        level = paired + ([level[-1]] if len(level) % 2 else [])
    return level[0]


@pytest.mark.parametrize("order", ["sequential", "pairwise", "threads32"])
def test_products_are_fp32_loops_in_their_order_bit_for_bit(order):
    x = _near_one(4)
    ours = ordered_prod(x, [1], False, order).numpy()
    rows = x.numpy()
    if order == "pairwise":
        expected = [_fp32_tree_product(row) for row in rows]
    else:
        expected = [_fp32_product(row, None if order == "sequential" else 32) for row in rows]
    assert np.array_equal(ours.view(np.uint32), np.array(expected, np.float32).view(np.uint32))


def test_a_sequential_cumprod_is_each_prefix_times_the_next_term():
    x = _near_one(5, (4, 60))
    ours = ordered_cumprod(x, 1)
    assert torch.equal(ours[:, 0], x[:, 0])
    for k in range(1, 60):
        assert torch.equal(ours[:, k], ours[:, k - 1] * x[:, k])


def test_a_products_allowance_is_its_size_times_the_root_of_its_multiplications():
    x = _near_one(6, (3, 10)).double()
    assert torch.equal(product_error_scale("prod", x.prod(1), x, [1]), x.prod(1).abs() * math.sqrt(9))
    running = x.cumprod(1)
    steps = torch.tensor([1.0, *range(1, 10)], dtype=torch.float64).sqrt()  # the first place: one rounding allowed
    assert torch.allclose(product_error_scale("cumprod", running, x, [1]), running.abs() * steps)


class _Cumprod(nn.Module):
    def forward(self, x):
        return torch.cumprod(x, dim=1)


def test_a_fp32_chain_of_products_stays_within_the_floor_the_cumprod_is_given():
    """The floor's allowance for a running product, u·|y_k|·√k (``product_error_scale``), holds a sequential fp32
    chain's measured error: over 64 rows of 2000 terms the error in units of it has a root mean square near 1 (the
    probabilistic model's size), and no place is past the 8 units the engine's floor allows."""
    x = _near_one(7, (64, 2000))
    chain = ordered_cumprod(x, 1).double()
    exact = x.double().cumprod(1)
    units = (chain - exact).abs() / (math.ldexp(1.0, -24) * product_error_scale("cumprod", exact, x, [1]))
    assert 0.2 < units.pow(2).mean().sqrt().item() < 2.0
    assert units.max().item() < 8.0
    noise = Noise(torch.Generator().manual_seed(0), {}, sign=1)
    moved = evaluate(_Cumprod(), [x.double()], Arithmetic(noise=noise)).output
    centre = evaluate(_Cumprod(), [x.double()], Arithmetic()).output
    assert torch.allclose(moved - centre, math.ldexp(1.0, -24) * product_error_scale("cumprod", centre, x, [1]),
                          rtol=1e-6)  # fmt: skip
