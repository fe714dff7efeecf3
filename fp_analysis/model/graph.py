"""The reference Model as a graph of ATen ops: what each op does to the numbers (``OpKind``), and the record of each
op an evaluation ran (``OpRecord``), named as a user recognises it (``describe_op``).

The kind decides how an op is treated everywhere: a linear op's operands are where precision modes act and its
error scales with Σ|w·x|; a reduction's error scales with Σ|x| and its order (``reduction_orders``); a composite op
in ``DECOMPOSED`` is evaluated through its decomposition so each sum inside it is seen; a transcendental op is what
fast-math approximates; an exact op rounds nothing; a random one has no single output.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from enum import Enum

import torch

__all__ = [
    "ADDED_FIRST",
    "DATA_MOVES",
    "DECOMPOSED",
    "HOLDS_PRODUCTS",
    "LINEAR_OPS",
    "REDUCTIONS",
    "OpKind",
    "OpRecord",
    "combines_terms",
    "describe_op",
    "detail_of",
    "kind_of",
    "multiplied",
    "terms_of",
]

aten = torch.ops.aten

# The linear ops: where a precision mode (TF32, bf16, fp16 operands) acts; each by its kind.
LINEAR_OPS = {
    aten.convolution.default: "convolution",
    aten.mm.default: "matrix product",
    aten.addmm.default: "matrix product",
    aten.bmm.default: "matrix product",
    aten.baddbmm.default: "matrix product",
    aten.mv.default: "matrix product",
    aten.addmv.default: "matrix product",
    aten.dot.default: "matrix product",
    aten.vdot.default: "matrix product",
}
# The linear ops whose multiplied operands are their second and third (the first is added: ``beta·C + A·B``).
ADDED_FIRST = frozenset({aten.addmm.default, aten.baddbmm.default, aten.addmv.default})


def multiplied(func) -> tuple[int, int]:
    """The positions of a linear op's two multiplied operands (addmm's, baddbmm's and addmv's come after the added
    matrix)."""
    return (1, 2) if func in ADDED_FIRST else (0, 1)


# Ops that copy values or view them in another layout (or dtype): which of them run depends on memory layout (a
# channels_last input, the device's kernels), not on the values, so paths are compared without them.
DATA_MOVES = frozenset({
    "clone", "contiguous", "_to_copy", "copy", "copy_", "detach", "alias", "lift_fresh", "view", "_unsafe_view",
    "_reshape_alias", "reshape", "as_strided", "expand", "permute", "transpose", "t", "squeeze", "unsqueeze",
})  # fmt: skip

# Ops that round nothing: moving, selecting or comparing values, taking a sign or a max.
_EXACT = DATA_MOVES | {
    "slice", "select", "index", "index_select", "gather", "cat", "stack", "flatten", "unflatten", "split",
    "split_with_sizes", "chunk", "unbind", "relu", "relu_", "clamp", "clamp_", "clamp_min", "clamp_max", "hardtanh",
    "hardtanh_", "neg", "abs", "max", "min", "amax", "amin", "maximum", "minimum", "where", "masked_fill", "zeros",
    "zeros_like", "ones", "ones_like", "empty", "empty_like", "empty_strided", "full", "full_like", "fill_", "zero_",
    "constant_pad_nd", "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
    "max_pool2d", "max_pool1d", "max_pool3d", "adaptive_max_pool2d", "adaptive_max_pool3d", "adaptive_max_pool1d",
    "sign", "floor", "ceil", "round", "trunc", "gt", "lt", "ge", "le", "eq", "ne", "isnan", "isinf",
    "logical_and", "logical_or", "logical_not", "bitwise_and", "sort", "topk", "argmax", "argmin", "repeat",
    "roll", "flip", "narrow", "new_zeros", "new_ones", "new_empty", "new_full", "scalar_tensor", "arange",
    "view_as", "expand_as", "squeeze_", "unsqueeze_", "set_", "resize_", "pad", "to", "real", "broadcast_in_dim",
    "convert_element_type", "collapse_view", "split_dim", "expand_dims", "squeeze_copy", "lift", "nonzero",
    "masked_select", "index_put", "scatter", "argsort", "cummax", "cummin",
}  # fmt: skip

# Reductions and scans: sums over many terms, whose rounding error scales with Σ|x| (the op applied to |x|), as a
# linear op's does with Σ|w·x| (``reduction_orders``); prims.sum, which decompositions reach, is named "sum" too.
REDUCTIONS = frozenset({
    "sum", "mean", "nansum", "cumsum", "trace", "avg_pool1d", "avg_pool2d", "avg_pool3d", "_adaptive_avg_pool2d",
    "_adaptive_avg_pool3d", "adaptive_avg_pool1d",
})  # fmt: skip

# Products over many terms: each multiplication rounds relative to the partial product, so the error grows with how
# many are multiplied, in any order (``reduction_orders.product_error_scale``).
PRODUCTS = frozenset({"prod", "cumprod"})

# Composite ops evaluated through their decomposition (``torch._decomp``) in fp64, so that each sum inside them (a
# norm's statistics, softmax's denominator, a loss's mean) carries its own rounding error in the floor, and each
# of their reductions is computed in a rewrite's order: the op as one result would carry one rounding of it.
DECOMPOSED = frozenset({
    "_softmax", "_log_softmax", "native_layer_norm", "native_group_norm", "native_batch_norm",
    "_native_batch_norm_legit", "_native_batch_norm_legit_no_training", "_native_batch_norm_legit_functional",
    "logsumexp", "mse_loss", "smooth_l1_loss", "huber_loss", "nll_loss_forward", "nll_loss2d_forward",
    "binary_cross_entropy", "soft_margin_loss", "linalg_vector_norm", "norm", "_fused_rms_norm", "var_mean", "var",
    "std", "std_mean", "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_attention_math", "matmul",
    "_safe_softmax", "cudnn_batch_norm", "_batch_norm_with_update", "_batch_norm_no_update",
})  # fmt: skip
# Decomposed ops whose decomposition holds matrix products (attention's Q·Kᵀ and P·V): a graph with one has linear
# ops for the precision rewrites even where none is at its top level.
HOLDS_PRODUCTS = frozenset({
    "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_attention_math", "matmul",
})  # fmt: skip

# Transcendental ops: what --use_fast_math replaces by hardware approximations (and approximate division
# and square root: -prec-div=false, -prec-sqrt=false, CUDA C++ Programming Guide, "Intrinsic Functions").
_TRANSCENDENTAL = {
    "tanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sigmoid", "silu", "mish", "softplus",
    "gelu", "erf", "erfc", "pow", "sqrt", "rsqrt", "div", "reciprocal", "sin", "cos", "elu", "selu", "celu",
    "hardswish", "hardsigmoid", "logsumexp", "_softmax", "_log_softmax", "native_group_norm",
    "native_layer_norm", "native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
}  # fmt: skip

# Ops that draw random numbers: a Model with them in forward has no single output to explain.
_RANDOM = {
    "rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "bernoulli", "bernoulli_", "uniform_",
    "normal", "normal_", "multinomial", "randperm", "native_dropout", "exponential_", "geometric_", "cauchy_",
    "log_normal_", "random_",
}  # fmt: skip


class OpKind(str, Enum):
    """What an op does to the numbers, as far as a precision hypothesis or a rounding model is concerned."""

    LINEAR = "linear"
    """A convolution or matrix product: a sum of products, where precision modes (TF32 ...) act."""
    TRANSCENDENTAL = "transcendental"
    """An op whose fast-math form is an approximation (tanh, exp, GELU, norms and softmax through them)."""
    REDUCTION = "reduction"
    """A sum over many terms (sum, mean, cumsum, average pooling): its error scales with Σ|x| and the order."""
    PRODUCT = "product"
    """A product over many terms (prod, cumprod): its error scales with |result| and the number of multiplications."""
    ARITHMETIC = "arithmetic"
    """An op that rounds its result once (add, mul, exp...)."""
    EXACT = "exact"
    """An op that rounds nothing (views, copies, max, clamp, ReLU, comparisons)."""
    RANDOM = "random"
    """An op that draws random numbers."""


def kind_of(func) -> OpKind:
    if func in LINEAR_OPS:
        return OpKind.LINEAR
    name = func.overloadpacket.__name__
    if name in _RANDOM:
        return OpKind.RANDOM
    if name in _EXACT or name.rstrip("_") in _EXACT:
        return OpKind.EXACT
    if name in REDUCTIONS:
        return OpKind.REDUCTION
    if name in PRODUCTS:
        return OpKind.PRODUCT
    if name in _TRANSCENDENTAL or name.rstrip("_") in _TRANSCENDENTAL:
        return OpKind.TRANSCENDENTAL
    return OpKind.ARITHMETIC


@dataclasses.dataclass(frozen=True)
class OpRecord:
    """One op of the graph: its position in the forward, ATen name, kind, the module that ran it, its output."""

    index: int
    name: str  # ATen's name without overload: "convolution", "gelu", "native_group_norm"
    kind: OpKind
    module: str  # qualified name of the innermost module running it ("" for the Model's own forward)
    module_type: str  # that module's class ("ConvTranspose3d"), or the Model's
    shape: tuple[int, ...]
    detail: str = ""  # what distinguishes it: "transposed, stride (2, 2, 2)", "approximate='tanh'"
    terms: int = 0  # a linear op: K, the products each of its outputs sums

    @property
    def label(self) -> str:
        """ATen's name as a user spells the op: 'softmax' for '_softmax', 'group_norm' for 'native_group_norm'."""
        name = self.name.strip("_").removeprefix("native_").removesuffix("_with_indices")
        name = name.removesuffix("_legit_no_training").removesuffix("_legit")
        return {"addmm": "matrix product", "mm": "matrix product", "bmm": "batched matrix product"}.get(name, name)

    def to_dict(self) -> dict:
        return {**dataclasses.asdict(self), "kind": self.kind.value}


def combines_terms(op: OpRecord) -> bool:
    """Whether ``op`` adds or multiplies many terms, so that its rounding depends on their order: a convolution or
    matrix product, a reduction or scan (of sums or products), or a composite op decomposed into sums (a norm's
    statistics, softmax's denominator)."""
    return op.kind in (OpKind.LINEAR, OpKind.REDUCTION, OpKind.PRODUCT) or op.name in DECOMPOSED


def describe_op(ops: Sequence[OpRecord], index: int) -> str:
    """A name for op ``index`` a user recognises: 'the ConvTranspose3d `conv_transpose`' for an op a module runs,
    'the gelu after the ConvTranspose3d `conv_transpose`' for one the Model's forward calls itself."""
    op = ops[index]
    if op.module:
        own = f"the {op.module_type} `{op.module}`"
        return f"the {op.label} in {own}" if op.kind is OpKind.EXACT else own
    # anchored on the nearest op before it that a module ran (the reader knows the modules), else a linear op
    before = next((o for o in reversed(ops[:index]) if o.module and o.kind is not OpKind.EXACT), None)
    before = before or next((o for o in reversed(ops[:index]) if o.kind is OpKind.LINEAR), None)
    if before is None:
        return f"the {op.label} (op {index} of {op.module_type}.forward)"
    anchor = describe_op(ops, before.index) if before.module else f"the {before.label} (op {before.index})"
    return f"the {op.label} after {anchor}"


def terms_of(func, args) -> int:
    """K of a linear op: (C_in / groups) · prod(kernel) for a convolution, the inner dimension of a product."""
    if func is aten.convolution.default:
        weight, transposed, groups = args[1], args[6], args[8]
        channels = weight.shape[0] // groups if transposed else weight.shape[1]
        return int(channels * math.prod(weight.shape[2:]))
    first = args[1] if func in ADDED_FIRST else args[0]
    return int(first.shape[-1])


def detail_of(func, args, kwargs) -> str:
    if func is aten.convolution.default:
        stride, padding, dilation, transposed, output_padding, groups = args[3:9]
        extra = f", output_padding {tuple(output_padding)}" if transposed else ""
        return (
            f"{'transposed, ' if transposed else ''}stride {tuple(stride)}, padding {tuple(padding)}, "
            f"dilation {tuple(dilation)}, groups {groups}{extra}"
        )
    if func.overloadpacket.__name__ == "gelu":
        return f"approximate={kwargs.get('approximate', 'none')!r}"
    return ""
