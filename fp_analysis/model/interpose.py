"""The reference Model as the graph it runs: each ATen op it dispatches, evaluated in a chosen arithmetic.

A ``TorchDispatchMode`` (``torch.utils._python_dispatch``) sees every ATen operator a Model's forward
reaches, however the Python spelled it — ``nn.ConvTranspose3d``, ``F.conv2d``, a name imported from
``torch.nn.functional``, ``x @ w`` — after autograd and before the backend, so one interposer serves
every evaluation fp_analysis makes of a Model (``Arithmetic``):

* **fp64**: every floating operand is carried in float64 and every ``dtype=float32`` argument (factories,
  ``.float()``) becomes float64, so the whole Model is evaluated in double precision;
* **as given** (float32): the ops run as PyTorch runs them, except what the arithmetic rewrites;
* **precision of the linear ops** — the convolutions (``aten.convolution``: every Conv and ConvTranspose)
  and matrix products (``aten.mm``/``addmm``/``bmm``/``baddbmm``), where tensor cores and TF32 act: their
  operands rounded to TF32/bf16/fp16 (nearest, ties to even, as the tensor cores round: shared/facts),
  then summed in fp64 (a re-creation of what the arithmetic computes, up to fp32 accumulation error) or in
  fp32 by PyTorch (what a kernel doing it computes);
* **another form of one activation**: GELU's tanh form for its erf form (or back), softplus and Mish
  computed the naive way in fp32 (``FORMS``);
* **fast-math**: exp and the functions built on it as ``--use_fast_math`` computes them (``fast_math``);
* **Monte-Carlo rounding** (``Noise``): each op's result perturbed by a random rounding error of fp32 size
  — relative 2^-24 for an arithmetic op, 2^-24·Σ|w·x| for a linear op — the way Monte-Carlo arithmetic
  (Parker 1997; Verificarlo, Denis et al. 2016) makes a program's rounding visible as the spread of its
  results; ``fp_analysis.model.engine`` turns the spread into its floor.

Each evaluation also records the ops (``OpRecord``: name, kind, the module that ran it, output shape),
which names the op a cause acts on and shows whether two evaluations took the same path.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from enum import Enum

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ..numerics.formats import FORMATS
from ..numerics.rounding import round_to
from ..options import autocast_format, linear_formats
from . import fast_math
from .autocast import LOWER_OPS, Autocast
from .conv64 import run_op as _run

__all__ = [
    "DATA_MOVES",
    "FORMS",
    "LINEAR_OPS",
    "Arithmetic",
    "Evaluation",
    "Noise",
    "OpKind",
    "OpRecord",
    "describe_op",
    "evaluate",
    "interposed",
    "precision_mode",
]

aten = torch.ops.aten

_U32 = FORMATS["fp32"].unit_roundoff  # 2^-24: the rounding of the sides fp_analysis judges
# Below fp32's smallest normal a rounding errs by up to half the smallest subnormal whatever the result's size:
# fl(x op y) = (x op y)(1 + δ) + η, |η| ≤ 2^-150 with gradual underflow (Higham 2002, §2.1, eq. (2.8)).
_ETA32 = float.fromhex("0x1p-150")

# The linear ops: where a precision mode (TF32, bf16, fp16 operands) acts; each by its kind.
LINEAR_OPS = {
    aten.convolution.default: "convolution",
    aten.mm.default: "matrix product",
    aten.addmm.default: "matrix product",
    aten.bmm.default: "matrix product",
    aten.baddbmm.default: "matrix product",
}
_KIND_NAMES = {"conv": "convolution", "matmul": "matrix product"}  # a reference mode's op kinds

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
    "view_as", "expand_as", "squeeze_", "unsqueeze_", "set_", "resize_", "pad",
}  # fmt: skip

# Transcendental ops: what --use_fast_math replaces by hardware approximations (and approximate division
# and square root: -prec-div=false, -prec-sqrt=false, CUDA C++ Programming Guide, "Intrinsic Functions").
_TRANSCENDENTAL = {
    "tanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sigmoid", "silu", "mish", "softplus",
    "gelu", "erf", "erfc", "pow", "sqrt", "rsqrt", "div", "reciprocal", "sin", "cos", "elu", "selu", "celu",
    "hardswish", "hardsigmoid", "logsumexp", "_softmax", "_log_softmax", "native_group_norm",
    "native_layer_norm", "native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
}  # fmt: skip

# Activations of the form x·g(x): computed in fp32 with g near 0 (GELU's 1 + erf(x/√2) for x ≪ 0) they err by
# about u·|x|, not u·|result|.
_X_TIMES_G = {"gelu", "silu", "mish"}

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
    ARITHMETIC = "arithmetic"
    """An op that rounds its result once (add, mul, mean, pooling averages...)."""
    EXACT = "exact"
    """An op that rounds nothing (views, copies, max, clamp, ReLU, comparisons)."""
    RANDOM = "random"
    """An op that draws random numbers."""


def _kind(func) -> OpKind:
    if func in LINEAR_OPS:
        return OpKind.LINEAR
    name = func.overloadpacket.__name__
    if name in _RANDOM:
        return OpKind.RANDOM
    if name in _EXACT or name.rstrip("_") in _EXACT:
        return OpKind.EXACT
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


def _terms(func, args) -> int:
    """K of a linear op: (C_in / groups) · prod(kernel) for a convolution, the inner dimension of a product."""
    if func is aten.convolution.default:
        weight, transposed, groups = args[1], args[6], args[8]
        channels = weight.shape[0] // groups if transposed else weight.shape[1]
        return int(channels * math.prod(weight.shape[2:]))
    first = args[0] if func in (aten.mm.default, aten.bmm.default) else args[1]
    return int(first.shape[-1])


def _detail(func, args, kwargs) -> str:
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


# --------------------------------------------------------------------------------------------- forms


def _gelu_other(args, kwargs):
    own = kwargs.get("approximate", "none")
    return aten.gelu.default(args[0], approximate="none" if own == "tanh" else "tanh")


def _in_fp32(fn: Callable[[torch.Tensor], torch.Tensor]):
    """A form evaluated in fp32 whatever the graph's precision: these forms differ from the op by how fp32
    rounds them (1 + exp(x) rounding to 1 for x < −17, say), which fp64 would hide."""

    def form(args, kwargs):
        x = args[0]
        return fn(x.float()).to(x.dtype)

    return form


def _softplus_naive(x):
    return torch.log(1 + torch.exp(x))


def _softplus_no_threshold(x):
    return torch.log1p(torch.exp(x))


# op name → {form name: (what it is, function(args, kwargs))}
FORMS: dict[str, dict[str, tuple[str, Callable]]] = {
    "gelu": {"other_gelu": ("the other GELU form (tanh approximation for erf, or the reverse)", _gelu_other)},
    "softplus": {
        "softplus_naive": ("softplus as log(1 + exp(x)) in fp32", _in_fp32(_softplus_naive)),
        "softplus_no_threshold": (
            "softplus as log1p(exp(x)) without PyTorch's threshold",
            _in_fp32(_softplus_no_threshold),
        ),
    },
    "mish": {
        "mish_naive": (
            "Mish as x·tanh(log(1 + exp(x))) in fp32",
            _in_fp32(lambda x: x * torch.tanh(_softplus_naive(x))),
        ),
    },
}  # fmt: skip


# ---------------------------------------------------------------------------------------- arithmetic


@dataclasses.dataclass
class Noise:
    """Monte-Carlo rounding for one evaluation: each op's result moved by a random rounding error.

    A linear op's output moves by ±u·Σ|w·x| (``scales``: the op's Σ|w·x|, from ``evaluate(...,
    record_scales=True)`` in fp64), an x·g(x) activation (GELU, SiLU, Mish) by ±u·(|result| + |x|), any other
    op that rounds by ±u·|result|; under ``fast_math`` a transcendental op by its fast-math form's measured
    residual times that (``fast_math.residual_units``). Each also moves by the underflow term η = 2^-150 (K·η for
    a linear op of K terms), so results near fp32's subnormal range carry the absolute error their rounding has
    there. Signs are drawn independently per element (Rademacher): every rounding error at its full size, in a
    random direction; or all one ``sign``, so that errors passing through increasing functions (most activations)
    add up instead of cancelling by chance.
    """

    generator: torch.Generator  # on the device the Model runs on
    scales: Mapping[int, torch.Tensor]
    fast_math: bool = False
    sign: int | None = None  # +1 or −1: every error in that direction (errors that add), None: random signs
    amplitude: float = 1.0  # errors this many times their size (a secant over that interval: see engine)


@dataclasses.dataclass(frozen=True)
class Arithmetic:
    """How an evaluation computes (see the module docstring).

    ``dtype``: float64 for the Model in double precision, float32 for the Model as given. ``linear_format``:
    "tf32", "bf16" or "fp16" rounds the operands of the linear ops in ``linear_ops`` (op indices; None: all of
    them, or only those of one kind with ``only_kind``: "convolution" or "matrix product") to nearest, ties as
    ``linear_rounding`` says ("rne": to even; "rna": away from zero, as PTX's ``cvt.rna.tf32.f32`` does), summed as
    ``accumulate`` says ("fp64": exact products summed in fp64; "fp32": PyTorch's own fp32 sum). ``kind_formats``
    (op kind → format), where given, says each kind's format instead (a reference mode: ``precision_mode``).
    ``forms``: op index → a form of ``FORMS``. ``fast_math``: the ops ``fast_math.EMULATED`` names computed as
    ``--use_fast_math`` computes them. ``autocast``: "bf16" or "fp16", the Model as ``torch.autocast`` runs it on a
    GPU in that format (``fp_analysis.model.autocast``); with ``whole``, the whole Model in it (``Model.half()``).
    """

    dtype: torch.dtype = torch.float64
    linear_format: str | None = None
    linear_rounding: str = "rne"
    linear_ops: frozenset[int] | None = None
    only_kind: str | None = None
    kind_formats: Mapping[str, str] | None = None
    accumulate: str = "fp64"
    forms: Mapping[int, str] = dataclasses.field(default_factory=dict)
    fast_math: bool = False
    autocast: str | None = None
    whole: bool = False
    noise: Noise | None = None

    def rounds(self, op: int, func) -> str | None:
        """The format the operands of linear op ``op`` (ATen ``func``) are rounded to; None: not rounded."""
        kind = LINEAR_OPS[func]
        if self.kind_formats is not None:
            return self.kind_formats.get(kind)
        if self.linear_format is None:
            return None
        if self.linear_ops is not None:
            return self.linear_format if op in self.linear_ops else None
        return self.linear_format if self.only_kind in (None, kind) else None


def precision_mode(mode: str) -> Arithmetic:
    """The Model in fp32 with its reference precision ``mode`` emulated (``options.linear_formats``: "fp32", "tf32"
    — cuDNN's default, the convolutions only; cuBLAS keeps matrix products in fp32 unless told, shared/facts —,
    "bf16"/"fp16" every linear op, "conv=FMT,matmul=FMT", or "autocast-bf16"/"autocast-fp16"): the one emulation
    of a precision mode that ``--reference-mode``, the batch-subset check and the report share.

    Each linear op's operands are rounded to its kind's format (nearest even), the exact products summed in fp64
    and the result rounded to fp32: what a TF32 / bf16 / fp16 reference computes to within fp32 accumulation error
    (shared/facts: cuDNN TF32 vs this emulation, 6.3e-6 on seed 000). The terms-level form of the same arithmetic,
    for sampled outputs, is ``fp_analysis.numerics.orders.AccumulationSpec.reduced_precision_reference``."""
    if autocast_format(mode):  # the whole Model as autocast runs it, results in the format too
        return Arithmetic(dtype=torch.float32, autocast=autocast_format(mode))
    formats = {_KIND_NAMES[kind]: fmt for kind, fmt in linear_formats(mode).items() if fmt != "fp32"}
    return Arithmetic(dtype=torch.float32, kind_formats=formats)


@dataclasses.dataclass
class Evaluation:
    """One forward of the Model: its output, its ops, and the linear ops' Σ|w·x| when they were asked for."""

    output: torch.Tensor
    ops: list[OpRecord]
    scales: dict[int, torch.Tensor] = dataclasses.field(default_factory=dict)
    rounded_linear_ops: int = 0  # how many linear ops had their operands rounded
    trace: dict[int, torch.Tensor] = dataclasses.field(default_factory=dict)  # op index → its output, if kept


def evaluate(
    model: torch.nn.Module,
    inputs: Sequence,
    arithmetic: Arithmetic,
    *,
    record_scales: bool = False,
    keep_outputs: bool = False,
) -> Evaluation:
    """``model(*inputs)`` under ``arithmetic``, with no gradients; inputs are copied (a Model that writes into
    its input changes nothing outside). ``record_scales`` keeps each linear op's Σ|w·x| (same precision);
    ``keep_outputs`` a copy of every op's floating output (``trace``: the error op by op, for small Models)."""
    copies = [t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]
    if arithmetic.dtype == torch.float64:
        copies = [_upcast_value(t) for t in copies]
    interposer = _Interposer(arithmetic, model, record_scales, keep_outputs)
    with torch.no_grad(), _module_names(model, interposer.modules), _parameters_in(model, arithmetic.dtype), interposer:
        output = model(*copies)
    if not isinstance(output, torch.Tensor):
        raise TypeError(f"the Model returned a {type(output).__name__}, not a tensor")
    return Evaluation(output, interposer.ops, interposer.scales, interposer.rounded, interposer.trace)


@contextlib.contextmanager
def interposed(arithmetic: Arithmetic):
    """A block in which every ATen op runs under ``arithmetic`` (yields the interposer: ``rounded`` counts the
    linear ops whose operands it rounded, ``ops`` records what ran); for running user code as it stands."""
    interposer = _Interposer(arithmetic, torch.nn.Module(), record_scales=False)
    with interposer:
        yield interposer


@contextlib.contextmanager
def _parameters_in(model: torch.nn.Module, dtype: torch.dtype):
    """For fp64, the Model's floating parameters and buffers as float64 copies while the block runs, the
    originals put back after: PyTorch checks that a conv's input and weight agree in dtype before the
    dispatcher (and so the interposer) sees the op, and running statistics updated in fp64 must not
    change the Model."""
    if dtype != torch.float64:
        yield
        return
    tensors = [t for t in [*model.parameters(), *model.buffers()] if t.is_floating_point()]
    originals = [t.data for t in tensors]
    try:
        for t in tensors:
            t.data = t.data.to(torch.float64)
        yield
    finally:
        for t, original in zip(tensors, originals, strict=True):
            t.data = original


@contextlib.contextmanager
def _module_names(model: torch.nn.Module, stack: list):
    """While a forward runs, ``stack`` holds (qualified name, class) of the modules it is inside, innermost last."""
    names = {id(m): name for name, m in model.named_modules()}

    def enter(module, args):
        if id(module) in names:
            stack.append((names[id(module)], type(module).__name__))

    def leave(module, args, output):
        if id(module) in names and stack:
            stack.pop()

    handles = [
        torch.nn.modules.module.register_module_forward_pre_hook(enter),
        torch.nn.modules.module.register_module_forward_hook(leave),
    ]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


class _Interposer(TorchDispatchMode):
    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        """False: leave ``__torch_dispatch__`` unwrapped. PyTorch wraps a mode's ``__torch_dispatch__`` so that
        torch.compile does not trace into it (``TorchDispatchMode.__init_subclass__``), and the wrapper imports
        torch._dynamo on its first call, most of a small job's time (experiments/PERF_NOTES.md). The interposer
        evaluates Models eagerly, op by op, so there is no compiled frame to protect."""
        return False

    def __init__(self, arithmetic: Arithmetic, model: torch.nn.Module, record_scales: bool, keep: bool = False):
        super().__init__()
        self.arithmetic = arithmetic
        self.record_scales = record_scales
        self.keep = keep
        self.trace: dict[int, torch.Tensor] = {}
        self.ops: list[OpRecord] = []
        self.scales: dict[int, torch.Tensor] = {}
        self.modules: list[tuple[str, str]] = []
        self.model_type = type(model).__name__
        self.rounded = 0
        self.autocast = Autocast(arithmetic.autocast, arithmetic.whole) if arithmetic.autocast else None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        a = self.arithmetic
        index = len(self.ops)
        if a.dtype == torch.float64:
            args, kwargs = _upcast(args), _upcast_kwargs(kwargs)
        kind = _kind(func)
        name = func.overloadpacket.__name__
        if kind is OpKind.LINEAR and a.rounds(index, func):
            out = self._rounded_linear(func, args, kwargs, a.rounds(index, func))
        elif self.autocast is not None:
            self.rounded += name in LOWER_OPS
            out = self.autocast.run(name, args, kwargs, lambda given, named: _run(func, given, named))
        elif index in a.forms:
            out = FORMS[name][a.forms[index]][1](args, kwargs)
        elif a.fast_math and name.rstrip("_") in fast_math.EMULATED:
            out = fast_math.EMULATED[name.rstrip("_")](*args, **kwargs)
            if name.endswith("_"):  # in place: the caller reads its first operand
                out = args[0].copy_(out)
        else:
            out = _run(func, args, kwargs)
        if kind is OpKind.LINEAR and self.record_scales:
            # addmm/baddbmm's alpha and beta as magnitudes too: Σ|w·x| must not cancel
            magnitudes = {k: abs(v) if isinstance(v, (int, float)) else v for k, v in kwargs.items()}
            self.scales[index] = _run(func, _absolute(args), magnitudes)
        if a.noise is not None and isinstance(out, torch.Tensor) and out.is_floating_point():
            # a fast-math op errs by up to its measured residual, in units of u·(|f(x)| + |x|) as the probe measures
            # it: the floor allows ``amplitude`` × σ, so σ is that residual over the amplitude (at least the op's
            # own rounding)
            fast = a.noise.fast_math and kind is OpKind.TRANSCENDENTAL
            times_g = name.rstrip("_") in _X_TIMES_G or fast
            operand = args[0] if times_g and args and isinstance(args[0], torch.Tensor) else None
            if operand is not None and operand.shape != out.shape:  # a reduction (logsumexp): |f(x)| alone
                operand = None
            terms = _terms(func, args) if kind is OpKind.LINEAR else 1
            ulps = max(1.0, fast_math.residual_units(name, kwargs) / a.noise.amplitude) if fast else 1.0
            unit = self.autocast.unit(out) if self.autocast is not None else 0.0
            moved = self._perturbed(index, kind, out, name.endswith("_"), operand, terms, ulps, unit)
            out = moved if self.autocast is None else self.autocast.carry(out, moved)
        module, module_type = self.modules[-1] if self.modules else ("", self.model_type)
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else ()
        terms = _terms(func, args) if kind is OpKind.LINEAR else 0
        if self.keep and isinstance(out, torch.Tensor) and out.is_floating_point():
            self.trace[index] = out.detach().clone()
        self.ops.append(OpRecord(index, name, kind, module, module_type, shape, _detail(func, args, kwargs), terms))
        return out

    def _rounded_linear(self, func, args, kwargs, fmt: str):
        """The linear op with its two multiplied operands rounded to ``fmt`` (through fp32, as a kernel
        reading fp32 tensors would round them); a bias or an addmm's added matrix is not rounded."""
        self.rounded += 1
        positions = (0, 1) if func in (aten.convolution.default, aten.mm.default, aten.bmm.default) else (1, 2)
        dtype = args[positions[0]].dtype

        def rounded(t: torch.Tensor) -> torch.Tensor:
            as_format = round_to(t.float(), fmt, self.arithmetic.linear_rounding)
            return as_format.to(torch.float64 if self.arithmetic.accumulate == "fp64" else torch.float32)

        new = list(args)
        for p in positions:
            new[p] = rounded(args[p])
        for p, value in enumerate(new):  # the rest (a bias, the added matrix) in the same precision
            if p not in positions and isinstance(value, torch.Tensor) and value.is_floating_point():
                new[p] = value.to(new[positions[0]].dtype)
        return _run(func, tuple(new), kwargs).to(dtype)

    def _perturbed(
        self,
        index: int,
        kind: OpKind,
        out: torch.Tensor,
        in_place: bool,
        operand,
        terms: int,
        ulps: float,
        unit: float,
    ) -> torch.Tensor:
        """``out`` moved by its rounding error (``Noise``), and by ``unit``·|out| more where its result is rounded to
        a reduced format (autocast's), a rounding that may go either way."""
        noise = self.arithmetic.noise
        if kind is OpKind.RANDOM or (kind is OpKind.EXACT and not unit):
            return out
        if noise.sign is None:
            signs = torch.randint(0, 2, out.shape, generator=noise.generator, device=out.device).to(out.dtype) * 2 - 1
        else:
            signs = torch.full_like(out, float(noise.sign))
        if kind is OpKind.EXACT:  # rounds nothing of its own: only the format's rounding of what it was given
            error = noise.amplitude * unit * out.abs() * signs
        elif kind is OpKind.LINEAR and index in noise.scales:  # each of its K products and sums may underflow
            error = noise.amplitude * (_U32 * noise.scales[index].to(out.dtype) + terms * _ETA32) * signs
        else:
            size = out.abs() if operand is None else out.abs() + operand.abs().to(out.dtype)
            error = noise.amplitude * ulps * (_U32 * size + _ETA32) * signs
        if unit and kind is not OpKind.EXACT:
            error = error + noise.amplitude * unit * out.abs() * signs
        return out.add_(error) if in_place else out + error  # an in-place op's caller reads its first operand


def _upcast(args):
    return tuple(_upcast_value(a) for a in args)


def _upcast_value(value):
    if isinstance(value, torch.Tensor) and value.is_floating_point() and value.dtype != torch.float64:
        return value.to(torch.float64)
    if isinstance(value, (list, tuple)):
        return type(value)(_upcast_value(v) for v in value)
    if isinstance(value, torch.dtype) and value.is_floating_point:
        return torch.float64
    return value


def _upcast_kwargs(kwargs: dict) -> dict:
    return {k: _upcast_value(v) for k, v in kwargs.items()}


def _absolute(args):
    """The op's arguments with every floating tensor replaced by its absolute value (for Σ|w·x|)."""
    return tuple(a.abs() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args)
