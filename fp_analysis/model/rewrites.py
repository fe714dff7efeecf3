"""The re-creations tried: rewrites of the reference graph, each one arithmetic a side may have used.

A rewrite changes one thing about how the reference Model computes (``fp_analysis.model.engine``'s docstring,
step 3): its linear ops' operands rounded to TF32/bf16/fp16 (all of them, the convolutions or the matrix products
apart, each op alone), rounded to nearest with ties to even or, for TF32, ties away from zero (PTX's cvt.rna:
cuDNN's implicit-GEMM TF32 convolutions round so, experiments/results/tf32_probe_h200.json) or toward zero (a tensor
core given fp32 bits reads their top 19: a kernel that skips the conversion truncates); another form of one
activation (``interpose.FORMS``: at every op of its name, and at each alone where there are at most
``_SINGLE_OP_REWRITES``, as for the linear ops: a recurrence's thousands of tanh ops must not each be a rewrite, each
an evaluation of the whole graph); fast-math transcendentals (``fast_math``); a precision with a form; the Model
under ``torch.autocast`` in bf16 or fp16 (``autocast``: results in the format too, not only operands), or wholly
in it (``Model.half()``).
``rewrites_of(ops)`` lists them for a graph, plain fp32 first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from .forms import FORMS, FORMULA_FORMS
from .graph import HOLDS_PRODUCTS, OpKind, OpRecord, combines_terms, describe_op
from .interpose import Arithmetic
from .reduction_orders import ANY_ORDER, ORDER_WORDS, ORDERS
from .verdict import CauseKind

__all__ = ["PRECISIONS", "Rewrite", "evaluations_needed", "rewrites_of"]
PRECISIONS = ("tf32", "bf16", "fp16")
_SINGLE_OP_REWRITES = 3  # at most this many linear ops get a precision rewrite of their own
_FORMAT_NAMES = {"tf32": "TF32", "bf16": "bf16", "fp16": "fp16"}
_DTYPE_NAMES = {"bf16": "bfloat16", "fp16": "float16"}
# The two tie rules of round-to-nearest a kernel's fp32 → TF32 conversion uses: PTX's cvt.rna.tf32.f32 rounds
# ties away from zero, and cuDNN's implicit-GEMM TF32 convolutions on the H200 agree with it and not with
# ties-to-even (experiments/results/tf32_probe_h200.json: 180 units of σ from ties-to-even on a 3×3 conv with
# K = 288, where one operand tie moves an output by 2^13/K units of its mean term).
# A third, toward zero: an mma.sync or wgmma with .tf32 operands given fp32 registers uses their upper 19 bits and
# ignores the 13 below (PTX ISA, "Warp-level matrix fragment" data types: .tf32 operands hold fp32 bit patterns whose
# lower mantissa bits are ignored), so a kernel that leaves out cvt.rna (wmma's __float_to_tf32) truncates its
# operands, as CUTLASS's round_toward_zero does and our 3xTF32 kernels' big part (kernels/conv_tf32.cuh).
_TIES = {
    "rne": "to nearest, ties to even",
    "rna": "to nearest, ties away from zero, as cvt.rna.tf32.f32",
    "rz": "toward zero, as a tensor core reads fp32 bits it is given",
}


@dataclasses.dataclass(frozen=True)
class Change:
    """One change a rewrite makes: the cause it names on a side, what it re-creates, the op it acts on."""

    precision: str | None  # the format of a precision change; None for a form, an order or fast-math
    what: str
    where: str
    gelu: bool = False  # a form change of a GELU (``gelu_approximation``)
    cause: CauseKind | None = None  # the cause of a change that is not a precision or an approximation

    def kind(self, side: str) -> CauseKind:
        """The cause this change names on ``side`` ("reference", "candidate", "shared")."""
        if self.precision is not None:
            return CauseKind.precision(side, self.precision)
        if self.cause is not None:
            return self.cause
        return CauseKind.GELU_APPROXIMATION if self.gelu else CauseKind.APPROXIMATION


@dataclasses.dataclass(frozen=True)
class Rewrite:
    """One rewrite of the reference graph (see the module docstring); the default is plain fp32."""

    precision: str | None = None  # format of the rounded linear ops' operands
    linear_ops: tuple[int, ...] | None = None  # which linear ops (None: all)
    only_kind: str | None = None  # the linear ops of one kind only ("convolution", "matrix product")
    form: tuple[tuple[int, ...], str] | None = None  # (the op indices it acts on, form name)
    fast_math: bool = False
    ties: str = "rne"  # how the operands round: "rne" (nearest, ties to even), "rna" (ties away) or "rz" (truncated)
    autocast: bool = False  # ``precision`` as torch.autocast runs the Model in it (``autocast``), not operands only
    whole: bool = False  # with ``autocast``: the whole Model in ``precision`` (``Model.half()``), no op in fp32
    order: str | None = None  # every sum and product (cumsum, prod…) in fp32 in this order (``ORDERS``)

    def arithmetic(self) -> Arithmetic:
        """The interposer's arithmetic that evaluates the Model as this rewrite says."""
        if self.autocast:
            return Arithmetic(autocast=self.precision, whole=self.whole)
        return Arithmetic(
            linear_format=self.precision,
            linear_rounding=self.ties,
            linear_ops=None if self.linear_ops is None else frozenset(self.linear_ops),
            only_kind=self.only_kind,
            forms={} if self.form is None else dict.fromkeys(self.form[0], self.form[1]),
            fast_math=self.fast_math,
            reduction_order=None if self.order == ANY_ORDER else self.order,
        )

    @property
    def second_line(self) -> bool:
        """Tried only where a side is left that no other rewrite re-creates (``engine``): TF32 with ties away from
        zero (cuDNN's implicit GEMM) or truncated (a tensor core given fp32 bits), the whole Model under autocast, and
        the sums' named orders — a side of any of
        them departs from every first-line rewrite, and each doubles the evaluations where it would change nothing."""
        return self.ties != "rne" or self.autocast or self.order is not None

    @property
    def plain(self) -> bool:
        return self.precision is None and self.form is None and not self.fast_math and self.order is None

    @property
    def change_count(self) -> int:
        """How many things this rewrite changes (0 for plain fp32)."""
        return (self.precision is not None) + (self.form is not None) + self.fast_math + (self.order is not None)

    def changes(self, ops: Sequence[OpRecord]) -> list[Change]:
        """Each change this rewrite makes, in words, on the graph ``ops``."""
        out = []
        if self.whole:
            name = _FORMAT_NAMES[self.precision]
            what = (
                f"the whole Model in {name} (Model.{'half' if self.precision == 'fp16' else 'bfloat16'}()): "
                f"parameters, inputs and every op's result in {name}, products summed in fp32"
            )
            out.append(Change(self.precision, what, f"every op, in {name}"))
        elif self.autocast:
            what = (
                f"the Model under torch.autocast({_DTYPE_NAMES[self.precision]}): its convolutions and matrix products "
                f"on {_FORMAT_NAMES[self.precision]} operands (bias too) with {_FORMAT_NAMES[self.precision]} "
                "results, the ops after them in that format until one of autocast's fp32 ops (softmax, the norms, "
                "exp, log, sums)"
            )
            out.append(Change(self.precision, what, f"every op autocast runs in {_FORMAT_NAMES[self.precision]}"))
        elif self.precision is not None:
            acted = self._linear(ops)
            where = describe_op(ops, acted[0]) if len(acted) == 1 else f"{len(acted)} {self._which()}"
            rounded = f"the operands of {where} rounded to {_FORMAT_NAMES[self.precision]} ({_TIES[self.ties]})"
            out.append(Change(self.precision, rounded, where))
        if self.form is not None:
            indices, form = self.form
            first = ops[indices[0]]
            where = describe_op(ops, first.index) if len(indices) == 1 else f"every {first.label} ({len(indices)} ops)"
            cause = CauseKind.FORMULA if form in FORMULA_FORMS else None
            what = f"{where} computed as {FORMS[first.name][form][0]}"
            out.append(Change(None, what, where, gelu=first.name == "gelu", cause=cause))
        if self.order is not None:
            ordered = [o for o in ops if _sums(o, self.order)]
            products = sum(o.kind is OpKind.PRODUCT for o in ordered)
            if len(ordered) == 1:
                where = describe_op(ops, ordered[0].index)
            elif products == len(ordered):
                where = f"the {len(ordered)} ops that multiply"
            else:
                where = f"the {len(ordered)} ops that sum (norms, softmax, losses too)"
            if not products:
                what = f"the sums of {where} added {ORDER_WORDS[self.order]}, in fp32"
            elif products == len(ordered):
                what = f"the products of {where} multiplied {ORDER_WORDS[self.order]}, in fp32"
            else:
                what = f"the sums and products of {where} computed {ORDER_WORDS[self.order]}, in fp32"
            out.append(Change(None, what, where, cause=CauseKind.ACCUMULATION_ORDER))
        if self.fast_math:
            what = (
                "fast-math transcendentals as --use_fast_math computes them (__expf's rounded argument in exp, "
                "sigmoid, SiLU, softplus and softmax; the measured error of tanhf, division and square root)"
            )
            out.append(Change(None, what, "every transcendental op"))
        return out

    def kinds(self, side: str, ops: Sequence[OpRecord]) -> list[CauseKind]:
        """The causes this rewrite names when it re-creates ``side``."""
        return [change.kind(side) for change in self.changes(ops)]

    def _linear(self, ops: Sequence[OpRecord]) -> list[int]:
        if self.linear_ops is not None:
            return list(self.linear_ops)
        return [o.index for o in ops if o.kind is OpKind.LINEAR and self.only_kind in (None, _linear_kind(o))]

    def _which(self) -> str:
        named = {"convolution": "convolutions", "matrix product": "matrix products"}
        return named.get(self.only_kind, "linear ops (convolutions and matrix products)")

    def key(self) -> str:
        """The rewrite's name in records ("plain", "tf32[all]", "tf32~rna[conv]", "tanh@3", "fast_math")."""
        parts = []
        if self.autocast:
            parts.append(f"{'half' if self.whole else 'autocast'}_{self.precision}")
        elif self.precision:
            scope = "all" if self.linear_ops is None else ",".join(map(str, self.linear_ops))
            ties = "" if self.ties == "rne" else f"~{self.ties}"
            short = {"convolution": "conv", "matrix product": "matmul"}
            parts.append(f"{self.precision}{ties}[{short.get(self.only_kind, scope)}]")
        if self.form:
            indices, form = self.form
            parts.append(f"{form}@{indices[0] if len(indices) == 1 else 'every'}")
        if self.fast_math:
            parts.append("fast_math")
        if self.order:
            parts.append(f"order_{self.order}")
        return "+".join(parts) or "plain"


def _linear_kind(op: OpRecord) -> str:
    """A linear op's kind, as ``interpose.LINEAR_OPS`` names it."""
    return "convolution" if op.name == "convolution" else "matrix product"


def _sums(op: OpRecord, order: str | None) -> bool:
    """Whether an order rewrite re-orders ``op``'s sums or products: a reduction or scan (a prod, a cumprod), an op
    decomposed into sums (a norm, softmax, a loss), and under the sequential order (None: any order) a matrix
    product's dot products."""
    if op.kind is OpKind.LINEAR:
        return op.name != "convolution" and order in (None, "sequential")
    return combines_terms(op)


def rewrites_of(ops: Sequence[OpRecord]) -> list[Rewrite]:
    """The rewrites tried on the graph ``ops`` (module docstring), plain first; each TF32 one followed by its
    ties-away and truncating twins (tried only where a side is left that no other rewrite re-creates)."""
    linear = [o for o in ops if o.kind is OpKind.LINEAR]
    convolutions = [o for o in linear if o.name == "convolution"]
    scopes: list[dict] = [{}]
    if convolutions and len(convolutions) < len(linear):  # both kinds: cuDNN's and cuBLAS's switches apart
        scopes += [{"only_kind": "convolution"}, {"only_kind": "matrix product"}]
    if len(linear) > 1:
        scopes += [{"linear_ops": (o.index,)} for o in linear[:_SINGLE_OP_REWRITES]]
    # a Linear's products and attention's batched ones apart: a kernel may run its Linears on TF32 tensor cores and
    # its attention in fp32 (or the reverse)
    batched = tuple(o.index for o in linear if o.name in ("bmm", "baddbmm"))
    plain = tuple(o.index for o in linear if o.name in ("mm", "addmm", "mv", "addmv", "dot", "vdot"))
    if batched and plain:
        scopes += [{"linear_ops": plain}, {"linear_ops": batched}]
    products = linear or any(o.name in HOLDS_PRODUCTS for o in ops)
    precisions = [Rewrite(precision=p, **scope) for scope in scopes for p in PRECISIONS] if products else []
    forms = [Rewrite(form=(where, form)) for name, where in _form_scopes(ops) for form in FORMS[name]]
    combined = [Rewrite(precision=p, form=h.form) for h in forms for p in PRECISIONS] if products else []
    sums = any(_sums(o, None) for o in ops)
    orders = [Rewrite(order=order) for order in (*ORDERS, ANY_ORDER)] if sums else []
    fast = [Rewrite(fast_math=True)] if any(o.kind is OpKind.TRANSCENDENTAL for o in ops) else []
    autocast = [Rewrite(precision=p, autocast=True, whole=w) for w in (False, True) for p in ("bf16", "fp16")]
    out = []
    for h in [Rewrite(), *precisions, *forms, *combined, *fast, *orders, *autocast]:
        out.append(h)
        if h.precision == "tf32":
            out += [dataclasses.replace(h, ties=ties) for ties in ("rna", "rz")]
    return out


def _form_scopes(ops: Sequence[OpRecord]) -> list[tuple[str, tuple[int, ...]]]:
    """(op name, the indices a form rewrite acts on) for each op name ``FORMS`` has: every op of that name (a kernel
    writes an activation once and calls it everywhere), then each alone where there are 2 to ``_SINGLE_OP_REWRITES``
    of them (one fused op rewritten, the others left to PyTorch)."""
    by_name: dict[str, list[int]] = {}
    for o in ops:
        if o.name in FORMS:
            by_name.setdefault(o.name, []).append(o.index)
    out = []
    for name, indices in by_name.items():
        out.append((name, tuple(indices)))
        if 1 < len(indices) <= _SINGLE_OP_REWRITES:
            out += [(name, (i,)) for i in indices]
    return out


def evaluations_needed(ops: Sequence[OpRecord], runs: int) -> int:
    """How many times the engine evaluates the Model after its fp32 run at most (the estimate it says): the truth
    and its Monte-Carlo runs, three for each other rewrite, and the Monte-Carlo runs of the one about to be named where
    its drift needs runs of its own (``engine._Analysis.drift``: a formula, fast-math, the any-order allowance)."""
    others = sum(1 for h in rewrites_of(ops) if not h.plain)
    return 1 + 2 + runs + 3 * others + (runs + 3 if others else 0)
