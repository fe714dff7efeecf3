"""Kernel variants as data: one ``VariantSpec`` is both the CUDA build's defines/flags and the CPU twin.

Each variant changes one arithmetic choice of a seed op (``Op``): the accumulation order and
contraction and operand rounding (an ``fp_analysis.numerics.orders.AccumulationSpec``), the order in which a
conv visits its K terms (``TermOrder``), fast-math, and for conv_gelu the GELU form and which erf/tanh
evaluates it; for conv2d also a tensor-core path. ``defines()`` and ``nvcc_flags()`` give the build,
``twin_accumulation()`` the CPU emulation of the same arithmetic. ``schedule`` says how the work is
laid out on the GPU (one thread per output, or shared-memory tiles); it never changes the arithmetic of
a twinned variant, so a tiled variant has the same twin as its direct counterpart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from fp_analysis.errors import ParameterError, enum_member
from fp_analysis.numerics.bounds import TermSums, bound_from_sums, epilogue_bound, tensor_core_bound
from fp_analysis.numerics.gelu32 import GeluForm
from fp_analysis.numerics.orders import AccumulationSpec, Combine, Contraction, OperandRounding, Order
from fp_analysis.ops.terms import TermOrder

__all__ = [
    "CUDA_FAST_MATH_GELU_ULPS",
    "DEFINE_CODES",
    "VARIANT_DEFINES",
    "GeluImpl",
    "Op",
    "Schedule",
    "TensorCore",
    "VariantBound",
    "VariantSpec",
    "tiled_variants",
    "variant_bound",
    "variant_matrix",
]


class Op(str, Enum):
    """The seed ops the kernels implement."""

    CONV2D = "conv2d"
    """General 2-d convolution: stride, padding, dilation, groups, bias (the dilated seed is one preset)."""
    CONV3D_KK1 = "conv3d_kk1"
    """3-d convolution with a (kh, kw, 1) kernel; stride, padding, dilation on all three axes."""
    CONV_GELU = "conv_gelu"
    """2-d convolution → per-channel multiplier → LeakyReLU → GELU, fused in one kernel."""


class GeluImpl(str, Enum):
    """Which erf / tanh the fused epilogue calls."""

    FPA = "fpa"
    """fp_analysis.numerics.gelu32's piecewise polynomials: fma/mul/add only, so the CPU twin is bit-exact."""
    CUDA = "cuda"
    """CUDA's erff / tanhf, as PyTorch's GELU kernels call them: no twin; checked against a measured bound."""


class TensorCore(str, Enum):
    """Whether a conv2d variant multiplies on the tensor cores."""

    NONE = "none"
    """CUDA cores, one thread per output: every variant with a twin."""
    TF32 = "tf32_mma"
    """mma.sync m16n8k8 with TF32 operands (rounded to nearest even first): no twin, checked against its bound."""
    TF32X3 = "3xtf32"
    """Each operand split into big + small TF32 parts, three mma products (Ootomo & Yokota 2022, IJHPCA 36(4)):
    near-fp32 accuracy, no twin. The three kernels that run it split and add differently, all inside
    ``tensor_core_bound(sums, 3)``: conv_mma.cu (direct) rounds big to nearest and carries the whole sum in the
    tensor cores' accumulator; conv_mma_tiled.cu truncates big (so v − big is exact), sums each 8-term step
    from zero in the tensor cores and adds it to an fp32 accumulator with __fadd_rn; conv_wgmma.cu splits as
    conv_mma_tiled.cu and adds each tap's CK channels from zero the same way."""

    @property
    def products(self) -> int:
        """Tensor-core products per term: 3 for 3xTF32, else 1 (the kernels' FPA_TC_SPLIT, the bound's split)."""
        return 3 if self is TensorCore.TF32X3 else 1


class Schedule(str, Enum):
    """How a variant spreads the work over the GPU; the arithmetic (and so the twin) does not change."""

    DIRECT = "direct"
    """One thread per output, terms decoded by division (conv_direct.cu, conv_mma.cu): simple, slow."""
    TILED = "tiled"
    """Implicit GEMM with shared-memory tiles, 128 pixels × 64 channels per block (conv_tiled.cu,
    conv_mma_tiled.cu): the fast kernels. Sequential and fp64 orders, input channel outermost."""


_TILED_ORDERS = (Order.SEQUENTIAL, Order.FP64)

# The codes of the defines that select a variant's arithmetic: the one table that both VariantSpec.defines() and
# the generated header (fpa_kernels.build.generated_header: ``#define FPA_ORDER_KAHAN 2`` …) are written from,
# so that a source compares FPA_ORDER with FPA_ORDER_KAHAN and never with a bare number.
_KERNEL_ORDERS = {Order.SEQUENTIAL: 0, Order.SPLIT_K: 1, Order.KAHAN: 2, Order.FP64: 3}
_KERNEL_OPERAND_ROUNDING = {OperandRounding.NONE: 0, OperandRounding.TF32: 1, OperandRounding.TF32_RZ: 2}
_EPILOGUES = {None: 0, GeluForm.NONE: 1, GeluForm.TANH: 2}  # None: no epilogue (conv2d, conv3d_kk1)
_GELU_IMPLS = {GeluImpl.FPA: 0, GeluImpl.CUDA: 1}
DEFINE_CODES: dict[str, dict[str, int]] = {
    "FPA_ORDER": {order.name: code for order, code in _KERNEL_ORDERS.items()},
    "FPA_OPROUND": {rounding.name: code for rounding, code in _KERNEL_OPERAND_ROUNDING.items()},
    "FPA_EPILOGUE": {"NONE" if f is None else f"GELU_{f.formula.upper()}": code for f, code in _EPILOGUES.items()},
    "FPA_GELU_IMPL": {impl.name: code for impl, code in _GELU_IMPLS.items()},
}
# Every define VariantSpec.defines() gives: a kernel reads a subset of them (fpa_kernels.registry).
VARIANT_DEFINES = (
    "FPA_ORDER", "FPA_SPLITS", "FPA_FUSED", "FPA_OPROUND", "FPA_TAP_OUTER", "FPA_EPILOGUE", "FPA_GELU_IMPL",
    "FPA_TC_SPLIT",
)  # fmt: skip


@dataclass(frozen=True)
class VariantSpec:
    """One kernel variant of ``op``; see the module docstring. Validated at construction."""

    op: Op
    accumulation: AccumulationSpec = field(default_factory=AccumulationSpec)
    term_order: TermOrder = TermOrder.CHANNEL_OUTER
    fast_math: bool = False
    gelu: GeluForm = GeluForm.NONE
    gelu_impl: GeluImpl = GeluImpl.FPA
    tensor_core: TensorCore = TensorCore.NONE
    schedule: Schedule = Schedule.DIRECT

    def __post_init__(self):
        object.__setattr__(self, "op", enum_member(Op, self.op, "op"))
        object.__setattr__(self, "term_order", enum_member(TermOrder, self.term_order, "term_order"))
        object.__setattr__(self, "gelu", enum_member(GeluForm, self.gelu, "gelu"))
        object.__setattr__(self, "gelu_impl", enum_member(GeluImpl, self.gelu_impl, "gelu_impl"))
        object.__setattr__(self, "tensor_core", enum_member(TensorCore, self.tensor_core, "tensor_core"))
        object.__setattr__(self, "schedule", enum_member(Schedule, self.schedule, "schedule"))
        acc = self.accumulation
        if not isinstance(acc, AccumulationSpec):
            raise ParameterError(f"accumulation must be an AccumulationSpec, got {type(acc).__name__}")
        if acc.order not in _KERNEL_ORDERS:
            allowed = ", ".join(repr(o.value) for o in _KERNEL_ORDERS)
            raise ParameterError(f"Got order={acc.order.value!r}, but the kernels implement only {allowed}.")
        if acc.order is Order.SPLIT_K and acc.combine is not Combine.TREE:
            raise ParameterError("Got combine='sequential', but the split-K kernels combine by a tree only.")
        if acc.operand_rounding not in _KERNEL_OPERAND_ROUNDING:
            allowed = ", ".join(repr(r.value) for r in _KERNEL_OPERAND_ROUNDING)
            raise ParameterError(
                f"Got operand_rounding={acc.operand_rounding.value!r}, but the kernels offer only {allowed}."
            )
        if acc.ftz:
            raise ParameterError("Got accumulation.ftz=True: flush-to-zero comes with fast_math=True in the kernels.")
        if not isinstance(self.fast_math, bool):
            raise ParameterError(f"Got fast_math={self.fast_math!r}, but fast_math must be True or False.")
        if self.tensor_core is not TensorCore.NONE:
            if self.op is not Op.CONV2D:
                raise ParameterError(
                    f"Got tensor_core={self.tensor_core.value!r} for op={self.op.value!r}: "
                    "tensor-core variants exist for 'conv2d' only."
                )
            if acc != AccumulationSpec() or self.term_order is not TermOrder.CHANNEL_OUTER:
                raise ParameterError(
                    "tensor-core variants fix their own accumulation: leave accumulation and "
                    "term_order at their defaults."
                )
        if self.schedule is Schedule.TILED and self.tensor_core is TensorCore.NONE:
            if acc.order not in _TILED_ORDERS or self.term_order is not TermOrder.CHANNEL_OUTER:
                raise ParameterError(
                    f"Got schedule='tiled' with order={acc.order.value!r} and term_order={self.term_order.value!r}: "
                    "the tiled kernel implements the 'sequential' and 'fp64' orders, input channel outermost."
                )
        if self.op is not Op.CONV_GELU and (self.gelu is not GeluForm.NONE or self.gelu_impl is not GeluImpl.FPA):
            raise ParameterError(f"gelu and gelu_impl apply to op='conv_gelu' only, not op={self.op.value!r}.")

    @property
    def twinned(self) -> bool:
        """Whether the CPU twin reproduces this variant bit for bit."""
        return self.tensor_core is TensorCore.NONE and self.gelu_impl is GeluImpl.FPA

    @property
    def label(self) -> str:
        """Stable short name, e.g. ``sequential/fma/tf32 [tap_outer] +fastmath``."""
        if self.tensor_core is not TensorCore.NONE:
            name = self.tensor_core.value
        else:
            name = self.accumulation.label
            if self.term_order is not TermOrder.CHANNEL_OUTER:
                name += f" [{self.term_order.value}]"
        if self.op is Op.CONV_GELU:
            name += f" gelu-{self.gelu.formula}-{self.gelu_impl.value}"
        if self.schedule is Schedule.TILED:
            name += " tiled"
        return name + (" +fastmath" if self.fast_math else "")

    def defines(self) -> dict[str, int]:
        """Preprocessor defines that select this variant's arithmetic in the CUDA source (``VARIANT_DEFINES``,
        coded as ``DEFINE_CODES`` says)."""
        acc = self.accumulation
        defines = {
            "FPA_ORDER": _KERNEL_ORDERS[acc.order],
            "FPA_SPLITS": acc.splits if acc.order is Order.SPLIT_K else 1,
            "FPA_FUSED": int(acc.contraction is Contraction.FMA),
            "FPA_OPROUND": _KERNEL_OPERAND_ROUNDING[acc.operand_rounding],
            "FPA_TAP_OUTER": int(self.term_order is TermOrder.TAP_OUTER),
            "FPA_EPILOGUE": _EPILOGUES[self.gelu if self.op is Op.CONV_GELU else None],
            "FPA_GELU_IMPL": _GELU_IMPLS[self.gelu_impl],
            "FPA_TC_SPLIT": self.tensor_core.products,
        }
        assert tuple(defines) == VARIANT_DEFINES
        return defines

    def nvcc_flags(self) -> list[str]:
        """Compiler flags beyond the defines: fast-math is a flag, not a define."""
        return ["--use_fast_math"] if self.fast_math else []

    def twin_accumulation(self) -> AccumulationSpec:
        """The CPU twin's spec: the variant's accumulation, flushing subnormals when fast-math is on."""
        a = self.accumulation
        return AccumulationSpec(
            a.order, a.contraction, a.operand_rounding, self.fast_math, a.block, a.splits, a.combine
        )


# The fp32 GELU's own error in units of u·|v| (``epilogue_bound``'s gelu_eval_ulps) when CUDA's erff / tanhf are
# built with --use_fast_math: 4 for the formula's roundings (epilogue_bound's derivation) + 35681, the largest error
# of either GELU form the GPU validation's probe measured (experiments/results/gpu_validation.json,
# fast_math_probe, H200: near 0 the fast functions flush and lose all relative accuracy). Without fast-math, CUDA's
# functions stay inside epilogue_bound's default 6 (probe: 1.94), and so do fp_analysis.numerics.gelu32's.
CUDA_FAST_MATH_GELU_ULPS = 4.0 + 35681.0


@dataclass(frozen=True)
class VariantBound:
    """Per-output error bounds of a variant against the exact result of its unrounded inputs."""

    deterministic: np.ndarray
    """Always holds (barring overflow)."""
    probabilistic: np.ndarray | None
    """Holds for each output with at least the probability asked for; None for the tensor-core variants, whose
    additions need not round to nearest (no probabilistic model of them)."""


def variant_bound(
    variant: VariantSpec,
    sums: TermSums,
    probability: float = 0.99,
    *,
    conv: np.ndarray | None = None,
    multiplier: np.ndarray | None = None,
    negative_slope: float = 0.01,
    gelu_eval_ulps: float | None = None,
) -> VariantBound:
    """The bound ``variant`` answers to on outputs whose term sums are ``sums``: the one choice of bound that
    report, fuzz, the GPU validation and the tests share.

    Tensor-core variants: ``fp_analysis.numerics.bounds.tensor_core_bound`` with ``variant.tensor_core.products``;
    the others ``bound_from_sums`` of the twin's accumulation (fast-math flushes: ``twin_accumulation``).
    conv_gelu adds the epilogue's propagation (``epilogue_bound``) and needs ``conv`` (the fp64 conv values)
    and ``multiplier`` (each output's channel multiplier); the fp32 GELU's own error is ``epilogue_bound``'s
    default, or ``CUDA_FAST_MATH_GELU_ULPS`` for CUDA's erff/tanhf under fast-math (``gelu_eval_ulps``
    overrides either: for a study, not for a check).
    """
    if variant.tensor_core is not TensorCore.NONE:
        return VariantBound(tensor_core_bound(sums, variant.tensor_core.products), None)
    bound = bound_from_sums(sums, variant.twin_accumulation(), probability)
    det, prob = bound.deterministic, bound.probabilistic
    if variant.op is Op.CONV_GELU:
        if conv is None or multiplier is None:
            raise ParameterError("conv_gelu's bound needs conv (the fp64 conv values) and multiplier (per output)")
        if gelu_eval_ulps is None and variant.gelu_impl is GeluImpl.CUDA and variant.fast_math:
            gelu_eval_ulps = CUDA_FAST_MATH_GELU_ULPS
        ulps = {} if gelu_eval_ulps is None else {"gelu_eval_ulps": gelu_eval_ulps}
        det, prob = (
            epilogue_bound(conv, b, multiplier, negative_slope, ftz=variant.fast_math, **ulps) for b in (det, prob)
        )
    return VariantBound(det, prob)


def variant_matrix(op: Op | str) -> list[VariantSpec]:
    """Every variant of ``op`` the validation builds: each axis varied against the plain sequential fmaf."""
    op = Op(op)
    seq = [
        VariantSpec(op, AccumulationSpec(Order.SEQUENTIAL, c, r), t, fm)
        for t in TermOrder
        for c in Contraction
        for r in _KERNEL_OPERAND_ROUNDING
        for fm in (False, True)
    ]
    other = [
        VariantSpec(op, AccumulationSpec(o, c, splits=s), TermOrder.CHANNEL_OUTER, fm)
        for o, s in ((Order.SPLIT_K, 4), (Order.SPLIT_K, 7), (Order.KAHAN, 4), (Order.FP64, 4))
        for c in (Contraction if o is not Order.FP64 else [Contraction.FMA])
        for fm in (False, True)
    ]
    variants = seq + other
    if op is Op.CONV_GELU:
        variants = [
            v
            for v in variants
            if v.accumulation.operand_rounding is OperandRounding.NONE or v.term_order is TermOrder.CHANNEL_OUTER
        ]
        variants = [VariantSpec(op, v.accumulation, v.term_order, v.fast_math, GeluForm.NONE) for v in variants] + [
            VariantSpec(op, AccumulationSpec(), TermOrder.CHANNEL_OUTER, fm, form, impl)
            for form in GeluForm
            for impl in GeluImpl
            for fm in (False, True)
            if (form, impl) != (GeluForm.NONE, GeluImpl.FPA)
        ]
    if op is Op.CONV2D:
        variants += [VariantSpec(op, tensor_core=tc) for tc in (TensorCore.TF32, TensorCore.TF32X3)]
    return variants + tiled_variants(op)


def tiled_variants(op: Op | str) -> list[VariantSpec]:
    """The tiled (fast) variants of ``op``: the fmaf chain plain and under fast-math, separate
    multiply-add, TF32 operands, fp64 accumulation; conv_gelu also the tanh form; conv2d also the
    tensor-core TF32 and 3xTF32 kernels."""
    op = Op(op)
    tiled = Schedule.TILED
    specs = [
        VariantSpec(op, AccumulationSpec(), fast_math=False, schedule=tiled),
        VariantSpec(op, AccumulationSpec(), fast_math=True, schedule=tiled),
        VariantSpec(op, AccumulationSpec(Order.SEQUENTIAL, Contraction.SEPARATE), schedule=tiled),
        VariantSpec(op, AccumulationSpec(operand_rounding=OperandRounding.TF32), schedule=tiled),
        VariantSpec(op, AccumulationSpec(Order.FP64), schedule=tiled),
    ]
    if op is Op.CONV_GELU:
        specs.append(VariantSpec(op, gelu=GeluForm.TANH, schedule=tiled))
    if op is Op.CONV2D:
        specs += [VariantSpec(op, tensor_core=tc, schedule=tiled) for tc in (TensorCore.TF32, TensorCore.TF32X3)]
    return specs
