"""The accumulation-order error table: every order × operand rounding on sampled outputs of one op.

Each row emulates one variant exactly on the CPU (``orders.accumulate``) over the K gathered terms of
each sampled output, and compares it with the fp64 value of the same terms (correctly rounded,
``reference.fp64_at``) and with its bounds (``bounds.dot_bound``).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np

from ..numerics.bounds import dot_bound
from ..numerics.orders import AccumulationSpec, Combine, Contraction, OperandRounding, Order, accumulate
from ..ops.conv import ConvSpec
from ..ops.presets import make_problem, require_sample_memory
from ..ops.reference import fp64_at, mpmath_at
from ..ops.terms import TermOrder, Terms, gather_terms, sample_output_indices, term_permutation

__all__ = [
    "OrderRow",
    "Variant",
    "default_variants",
    "format_table",
    "mpmath_spot_check",
    "order_table",
    "preset_terms",
]


@dataclass(frozen=True)
class Variant:
    """An accumulation spec plus the order in which a conv visits its K terms."""

    spec: AccumulationSpec
    term_order: TermOrder = TermOrder.CHANNEL_OUTER

    @property
    def label(self) -> str:
        """The spec's label, with the term order when it is not the default (channel outermost)."""
        if self.term_order is TermOrder.CHANNEL_OUTER:
            return self.spec.label
        return f"{self.spec.label} [{self.term_order.value}]"


def default_variants() -> list[Variant]:
    """The orders the table compares, each with no operand rounding and with TF32 / bf16 / fp16 operands."""
    shapes = [
        (AccumulationSpec(Order.SEQUENTIAL), TermOrder.CHANNEL_OUTER),
        (AccumulationSpec(Order.SEQUENTIAL, Contraction.SEPARATE), TermOrder.CHANNEL_OUTER),
        (AccumulationSpec(Order.SEQUENTIAL), TermOrder.TAP_OUTER),
        (AccumulationSpec(Order.REVERSE), TermOrder.CHANNEL_OUTER),
        (AccumulationSpec(Order.TREE, block=32), TermOrder.CHANNEL_OUTER),
        (AccumulationSpec(Order.SPLIT_K, splits=8, combine=Combine.TREE), TermOrder.CHANNEL_OUTER),
        (AccumulationSpec(Order.SPLIT_K, splits=8, combine=Combine.SEQUENTIAL), TermOrder.CHANNEL_OUTER),
        (AccumulationSpec(Order.KAHAN), TermOrder.CHANNEL_OUTER),
        (AccumulationSpec(Order.FP64), TermOrder.CHANNEL_OUTER),
    ]
    roundings = [
        OperandRounding.NONE,
        OperandRounding.TF32,
        OperandRounding.TF32_RZ,
        OperandRounding.BF16,
        OperandRounding.FP16,
    ]
    return [
        Variant(AccumulationSpec(s.order, s.contraction, r, s.ftz, s.block, s.splits, s.combine), t)
        for r in roundings
        for s, t in shapes
    ]


@dataclass(frozen=True)
class OrderRow:
    """One variant's error against fp64 on the sampled outputs, and its bounds."""

    variant: str
    max_abs: float
    mean_abs: float
    deterministic_bound_max: float
    probabilistic_bound_max: float
    max_error_over_bound: float  # max over outputs of error ÷ deterministic bound: ≤ 1 always
    within_probabilistic: float  # fraction of outputs inside the probabilistic bound
    seconds: float

    def to_dict(self) -> dict:
        """The row as plain JSON-safe data."""
        return asdict(self)


def preset_terms(preset: str, samples: int, seed: int = 0, batch: int | None = None) -> tuple[ConvSpec, Terms]:
    """The preset's conv spec and the gathered terms of ``samples`` outputs, inputs drawn as KernelBench does."""
    require_sample_memory(preset, samples, batch)
    problem = make_problem(preset, seed=seed, batch=batch)
    out_shape = problem.spec.output_shape(tuple(problem.x.shape))
    index = sample_output_indices(out_shape, samples, seed)
    return problem.spec, gather_terms(problem.spec, problem.x, problem.weight, problem.bias, index)


def order_table(
    spec: ConvSpec, terms: Terms, variants: list[Variant] | None = None, probability: float = 0.99
) -> list[OrderRow]:
    """One ``OrderRow`` per variant: max/mean |error| against the correctly rounded fp64 value, and bounds."""
    truth = fp64_at(terms)
    rows = []
    for variant in variants or default_variants():
        start = time.perf_counter()
        perm = term_permutation(spec, variant.term_order)
        got = accumulate(terms.w, terms.x, variant.spec, terms.bias, perm)
        seconds = time.perf_counter() - start
        bound = dot_bound(terms.w, terms.x, variant.spec, terms.bias, probability)
        err = np.abs(got.astype(np.float64) - truth)
        rows.append(
            OrderRow(
                variant=variant.label,
                max_abs=float(err.max()),
                mean_abs=float(err.mean()),
                deterministic_bound_max=float(bound.deterministic.max()),
                probabilistic_bound_max=float(bound.probabilistic.max()),
                max_error_over_bound=float(np.max(err / bound.deterministic)),
                within_probabilistic=float(np.mean(err <= bound.probabilistic)),
                seconds=seconds,
            )
        )
    return rows


def mpmath_spot_check(terms: Terms, count: int = 20, dps: int = 50) -> float:
    """Largest |fp64 truth − mpmath value| over the first ``count`` sampled outputs (should be ≤ 1 fp64 ulp)."""
    head = Terms(
        terms.w[:count], terms.x[:count], None if terms.bias is None else terms.bias[:count], terms.index[:count]
    )
    exact = np.array([float(v) for v in mpmath_at(head, dps=dps)])
    return float(np.max(np.abs(fp64_at(head) - exact)))


def format_table(rows: list[OrderRow]) -> str:
    """Rows as a fixed-width text table."""
    header = (
        f"{'variant':<38} {'max abs':>9} {'mean abs':>9} {'det bound':>9} {'prob bound':>10} "
        f"{'err/det':>7} {'in prob':>7}"
    )
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(
            f"{r.variant:<38} {r.max_abs:9.2e} {r.mean_abs:9.2e} {r.deterministic_bound_max:9.2e} "
            f"{r.probabilistic_bound_max:10.2e} {r.max_error_over_bound:7.3f} {r.within_probabilistic:7.1%}"
        )
    return "\n".join(lines)
