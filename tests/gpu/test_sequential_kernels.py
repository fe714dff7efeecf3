"""The sequential-order kernels (kernels/sequential.cu) give the bits of the torch loops they stand in for."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from fp_analysis.model import reduction_orders
from fp_analysis.numerics.orders import AccumulationSpec, accumulate

pytestmark = pytest.mark.gpu


def _loops(monkeypatch) -> None:
    """The torch loops: the kernels made unavailable."""
    monkeypatch.setattr(reduction_orders, "_kernels", lambda tensor: None)


def _bits(x: torch.Tensor) -> torch.Tensor:
    return x.contiguous().view(torch.int32).cpu()


@pytest.mark.parametrize("shape", [(3, 1000), (2, 5, 7), (4096, 33), (1, 0)])
def test_a_sum_and_a_cumsum_by_kernel_are_the_loops_bit_for_bit(shape, monkeypatch):
    from fpa_kernels import sequential

    x = torch.randn(shape, generator=torch.Generator().manual_seed(3)).cuda() * 100
    assert sequential.available(x)
    kernel_sum = reduction_orders.ordered_sum(x, [-1], False, "sequential")
    kernel_threads = reduction_orders.ordered_sum(x, None, False, "threads256")
    kernel_scan = reduction_orders.ordered_cumsum(x, 0)
    direct = sequential.sequential_rows(
        x.reshape(math.prod(shape[:-1]), shape[-1]), scan=False
    )  # raises where the kernel fails
    _loops(monkeypatch)
    assert torch.equal(_bits(kernel_sum), _bits(reduction_orders.ordered_sum(x, [-1], False, "sequential")))
    assert torch.equal(_bits(direct.reshape(shape[:-1])), _bits(kernel_sum))
    assert torch.equal(_bits(kernel_threads), _bits(reduction_orders.ordered_sum(x, None, False, "threads256")))
    assert torch.equal(_bits(kernel_scan), _bits(reduction_orders.ordered_cumsum(x, 0)))


@pytest.mark.parametrize("shapes", [((8, 3000), (3000, 5)), ((2, 1, 16, 64), (3, 64, 9)), ((33, 0), (0, 4))])
def test_a_matrix_product_by_kernel_is_the_fmaf_chain_of_the_core(shapes):
    from fpa_kernels import sequential

    generator = torch.Generator().manual_seed(5)
    a, b = (torch.randn(s, generator=generator) * 10 ** torch.randint(-3, 4, s, generator=generator) for s in shapes)
    out = reduction_orders.sequential_product(a.cuda(), b.cuda()).cpu()
    expected_shape = torch.matmul(a, b).shape
    assert out.shape == expected_shape
    k, count = shapes[0][-1], math.prod(expected_shape)
    if k == 0:  # an empty sum is +0 (the core refuses K = 0)
        chain = np.zeros(expected_shape, np.float32)
    else:
        left = torch.broadcast_to(a[..., :, None, :], (*expected_shape, k)).reshape(count, k).numpy()
        right = torch.broadcast_to(b.transpose(-1, -2)[..., None, :, :], (*expected_shape, k)).reshape(count, k)
        chain = accumulate(left, right.numpy(), AccumulationSpec("sequential", contraction="fma"))
        chain = chain.reshape(expected_shape)
    assert np.array_equal(out.numpy().view(np.uint32), chain.view(np.uint32)), "not the core's fused chain"
    if a.dim() == b.dim() == 2:  # the kernel called directly: a failure raises instead of falling back to the loop
        direct = sequential.sequential_dot(a[None].cuda(), b[None].cuda())[0].cpu()
        assert np.array_equal(direct.numpy().view(np.uint32), chain.view(np.uint32))
