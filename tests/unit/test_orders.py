"""Each accumulation order against a plain step-by-step model written with the public fp32 operations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from fp_analysis.errors import DtypeError, ParameterError, ShapeError
from fp_analysis.numerics.arith import add32, fma32, mul32
from fp_analysis.numerics.orders import AccumulationSpec, Combine, Contraction, OperandRounding, Order, accumulate
from fp_analysis.numerics.rounding import round_to

F32 = np.float32


def _step(acc, w, x, spec):
    if spec.contraction is Contraction.FMA:
        return fma32(w, x, acc, ftz=spec.ftz)
    return add32(acc, mul32(w, x, ftz=spec.ftz), ftz=spec.ftz)


def _model(w, x, spec, init, perm):
    """The spec's arithmetic one fp32 operation at a time, vectorised over outputs only."""
    if spec.operand_rounding.format_and_rounding:
        w, x = (round_to(a, *spec.operand_rounding.format_and_rounding) for a in (w, x))
    perm = perm[::-1] if spec.order is Order.REVERSE else perm
    start = np.zeros(w.shape[0], F32) if init is None else init
    cols = [(w[:, k], x[:, k]) for k in perm]
    if spec.order in (Order.SEQUENTIAL, Order.REVERSE):
        acc = start
        for a, b in cols:
            acc = _step(acc, a, b, spec)
        return acc
    if spec.order is Order.KAHAN:
        s, c = start, np.zeros_like(start)
        for a, b in cols:
            y = (
                fma32(a, b, -c, ftz=spec.ftz)
                if spec.contraction is Contraction.FMA
                else add32(mul32(a, b, ftz=spec.ftz), -c, ftz=spec.ftz)
            )
            t = add32(s, y, ftz=spec.ftz)
            c = add32(add32(t, -s, ftz=spec.ftz), -y, ftz=spec.ftz)
            s = t
        return s
    if spec.order is Order.FP64:
        flush = (lambda v: np.where(np.abs(v) < 2.0**-126, v * F32(0), v)) if spec.ftz else (lambda v: v)
        acc = start.astype(np.float64)
        for a, b in cols:
            acc = acc + flush(a).astype(np.float64) * flush(b)
        return flush(acc.astype(F32))
    size = spec.block if spec.order is Order.TREE else math.ceil(len(cols) / spec.splits)
    partials = []
    for j in range(spec.blocks(len(cols))):
        acc = start if j == 0 else np.zeros_like(start)
        for a, b in cols[j * size : (j + 1) * size]:
            acc = _step(acc, a, b, spec)
        partials.append(acc)
    if spec.order is Order.SPLIT_K and spec.combine is Combine.SEQUENTIAL:
        total = partials[0]
        for p in partials[1:]:
            total = add32(total, p, ftz=spec.ftz)
        return total
    while len(partials) > 1:
        pairs = [add32(partials[i], partials[i + 1], ftz=spec.ftz) for i in range(0, len(partials) - 1, 2)]
        partials = pairs + partials[len(pairs) * 2 :]
    return partials[0]


SPECS = [
    AccumulationSpec(order, contraction, rounding, ftz, block=block, splits=splits, combine=combine)
    for order in Order
    for contraction in Contraction
    for rounding, ftz in [(OperandRounding.NONE, False), (OperandRounding.TF32, False), (OperandRounding.BF16, True)]
    for block, splits, combine in [(4, 3, Combine.TREE), (1, 7, Combine.SEQUENTIAL)]
    if not (order not in (Order.TREE, Order.SPLIT_K) and block == 1)
]


def _data(seed, m, k, kind):
    rng = np.random.default_rng(seed)
    if kind == "uniform":  # KernelBench's torch.rand inputs against kaiming-uniform weights
        return (rng.uniform(-1, 1, (m, k)) / math.sqrt(k)).astype(F32), rng.random((m, k), dtype=F32)
    scale = np.exp2(rng.integers(-140, -100, (m, k)))  # products near and below the fp32 underflow
    return (rng.standard_normal((m, k)) * scale).astype(F32), (rng.standard_normal((m, k)) * 2.0**-20).astype(F32)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.label)
@pytest.mark.parametrize("kind", ["uniform", "tiny"])
def test_order_is_bitwise_its_step_by_step_model(spec, kind):
    w, x = _data(7, 37, 53, kind)
    init = np.random.default_rng(8).standard_normal(37).astype(F32) * (1e-3 if kind == "uniform" else 2.0**-125)
    perm = np.random.default_rng(9).permutation(53)
    for b in (None, init):
        got = accumulate(w, x, spec, b, perm)
        want = _model(w, x, spec, b, perm)
        assert got.dtype == F32 and got.shape == (37,)
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


@given(k=st.integers(1, 40), m=st.integers(1, 5), data=st.data())
def test_degenerate_splits_equal_sequential(k, m, data):
    w = data.draw(hnp.arrays(F32, (m, k), elements=st.floats(-8, 8, width=32)))
    x = data.draw(hnp.arrays(F32, (m, k), elements=st.floats(-8, 8, width=32)))
    seq = accumulate(w, x, AccumulationSpec())
    for same in (AccumulationSpec("split_k", splits=1), AccumulationSpec("tree", block=k)):
        assert np.array_equal(accumulate(w, x, same).view(np.uint32), seq.view(np.uint32))


def test_orders_really_differ_and_fp64_is_most_accurate():
    w, x = _data(1, 500, 1440, "uniform")
    exact = np.array([math.fsum(r) for r in w.astype(np.float64) * x])
    err = {o: np.abs(accumulate(w, x, AccumulationSpec(o)) - exact).max() for o in Order}
    assert len({float(e) for e in err.values()}) == len(Order)
    assert err[Order.FP64] <= min(err.values()) and err[Order.SEQUENTIAL] > 2 * err[Order.KAHAN]


def test_tap_outer_permutation_changes_bits():
    w, x = _data(2, 200, 288, "uniform")  # 32 channels × 9 taps
    tap_outer = np.arange(288).reshape(32, 9).T.reshape(-1)
    a = accumulate(w, x, AccumulationSpec())
    b = accumulate(w, x, AccumulationSpec(), perm=tap_outer)
    assert not np.array_equal(a, b)


def test_spec_validation_and_labels():
    assert AccumulationSpec("split_k", "separate", "tf32", splits=8, combine="sequential").label == (
        "split_k8-sequential/separate/tf32"
    )
    assert AccumulationSpec("tree", block=16, ftz=True).label == "tree16/fma/none/ftz"
    with pytest.raises(ParameterError, match=r"order='zigzag'.*'sequential'"):
        AccumulationSpec("zigzag")
    with pytest.raises(ParameterError, match="block=0"):
        AccumulationSpec("tree", block=0)
    with pytest.raises(ParameterError, match="operand_rounding='fp8'"):
        AccumulationSpec(operand_rounding="fp8")
    with pytest.raises(ParameterError, match="ftz"):
        AccumulationSpec(ftz="yes")


def test_accumulate_rejects_bad_input():
    w = np.ones((3, 4), F32)
    with pytest.raises(DtypeError, match="w of float64"):
        accumulate(w.astype(np.float64), w, AccumulationSpec())
    with pytest.raises(ShapeError, match="same shape"):
        accumulate(w, np.ones((3, 5), F32), AccumulationSpec())
    with pytest.raises(ShapeError, match="init must be"):
        accumulate(w, w, AccumulationSpec(), init=np.ones(4, F32))
    with pytest.raises(ParameterError, match="perm must be a permutation"):
        accumulate(w, w, AccumulationSpec(), perm=[0, 1, 1, 2])
    with pytest.raises(ShapeError, match="K = 0"):
        accumulate(np.ones((3, 0), F32), np.ones((3, 0), F32), AccumulationSpec())
