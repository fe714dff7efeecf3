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
from collections.abc import Mapping, Sequence

import torch
from torch._decomp import decomposition_table
from torch.nn.attention import SDPBackend, sdpa_kernel

from ..numerics.formats import FORMATS
from ..numerics.rounding import round_to
from ..options import autocast_format, linear_formats
from . import fast_math
from .autocast import LOWER_OPS, Autocast
from .conv64 import run_op as _run
from .dynamo_guards import EagerDispatchMode, resolve_dynamo_guards
from .exactness import exact_results, on_magnitudes
from .forms import FORMS
from .graph import (
    DECOMPOSED,
    LINEAR_OPS,
    OpKind,
    OpRecord,
    detail_of,
    kind_of,
    multiplied,
    terms_of,
)
from .operand_flips import exact_storages, flip_effect, record_deviation, record_operands
from .reduction_orders import (
    ordered_matrix_product,
    ordered_op,
    product_error_scale,
    sequential_error_scale,
    summed_dims,
)
from .state import attribute_tensors, kept, state_storages

__all__ = [
    "Arithmetic",
    "Evaluation",
    "Noise",
    "evaluate",
    "interposed",
    "precision_mode",
]

aten = torch.ops.aten

_U32 = FORMATS["fp32"].unit_roundoff  # 2^-24: the rounding of the sides fp_analysis judges
# Below fp32's smallest normal a rounding errs by up to half the smallest subnormal whatever the result's size:
# fl(x op y) = (x op y)(1 + δ) + η, |η| ≤ 2^-150 with gradual underflow (Higham 2002, §2.1, eq. (2.8)).
_ETA32 = float.fromhex("0x1p-150")

_KIND_NAMES = {"conv": "convolution", "matmul": "matrix product"}  # a reference mode's op kinds

# Sums and products an order rewrite computes in its order (``Arithmetic.reduction_order``).
_ORDERED = frozenset({"sum", "mean", "cumsum", "prod", "cumprod"})
# Matrix products a sequential order rewrite computes one fmaf at a time (convolutions keep their own kernels).
_PRODUCTS = frozenset(op for op, kind in LINEAR_OPS.items() if kind == "matrix product")
# Activations of the form x·g(x): computed in fp32 with g near 0 (GELU's 1 + erf(x/√2) for x ≪ 0) they err by
# about u·|x|, not u·|result|.
_X_TIMES_G = {"gelu", "silu", "mish"}
# Fast-math ops whose approximation errs relative to their result (CUDA C++ Programming Guide, "Mathematical Functions",
# the maximum ulp errors of __fdividef, sqrtf and rsqrtf under -prec-div/-prec-sqrt=false, __logf): their allowance is
# in units of u·|result|, not u·(|result| + |x|) (a mean's division of a sum by n would be allowed n times its error).
_RELATIVE_FAST = {"div", "reciprocal", "sqrt", "rsqrt", "pow", "log", "log2", "log10", "log1p"}
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
    only_fast: bool = False  # with ``fast_math``: only the transcendental ops err (``floor.floor_of`` says why)
    any_order: bool = False  # sums err as a sequential sum in any order does (``reduction_orders.ANY_ORDER``)
    # (linear op, operand position) → the operand where the evaluation without noise rounded it (``operand_flips``)
    operands: Mapping[tuple[int, int], torch.Tensor] = dataclasses.field(default_factory=dict)
    # the same keys → how far the noise runs moved that operand, over the amplitude: filled by the noise runs, read by
    # the run of ``flips_only``, which moves each rounded linear op's output by its operands' flips and nothing else
    deviations: dict = dataclasses.field(default_factory=dict)
    flips_only: bool = False
    # dispatch number → (op name, the outputs fp32 computes exactly in any order): no error of their own there
    # (``exactness``; recorded by the evaluation without noise, ``evaluate(..., record_exact=True)``)
    exact: Mapping[int, tuple[str, torch.Tensor]] = dataclasses.field(default_factory=dict)

    def signs_like(self, t: torch.Tensor) -> torch.Tensor:
        """A direction per element of ``t``: all ``sign``, or ±1 at random (Rademacher) where it is None."""
        if self.sign is not None:
            return torch.full_like(t, float(self.sign))
        return torch.randint(0, 2, t.shape, generator=self.generator, device=t.device).to(t.dtype) * 2 - 1


@dataclasses.dataclass(frozen=True)
class Arithmetic:
    """How an evaluation computes (see the module docstring).

    ``dtype``: float64 for the Model in double precision, float32 for the Model as given. ``linear_format``:
    "tf32", "bf16" or "fp16" rounds the operands of the linear ops in ``linear_ops`` (op indices; None: all of
    them, or only those of one kind with ``only_kind``: "convolution" or "matrix product") to nearest, ties as
    ``linear_rounding`` says ("rne": to even; "rna": away from zero, as PTX's ``cvt.rna.tf32.f32`` does; "rz": toward
    zero, as a tensor core reads fp32 bits), summed as
    ``accumulate`` says ("fp64": exact products summed in fp64; "fp32": PyTorch's own fp32 sum). ``kind_formats``
    (op kind → format), where given, says each kind's format instead (a reference mode: ``precision_mode``).
    ``forms``: op index → a form of ``FORMS``. ``fast_math``: the ops ``fast_math.EMULATED`` names computed as
    ``--use_fast_math`` computes them. ``autocast``: "bf16" or "fp16", the Model as ``torch.autocast`` runs it on a
    GPU in that format (``fp_analysis.model.autocast``); with ``whole``, the whole Model in it (``Model.half()``).
    ``reduction_order``: every sum, mean and cumsum (those inside decomposed ops too) computed in fp32 in that order
    (``reduction_orders.ORDERS``), the rest as ``dtype`` says.
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
    reduction_order: str | None = None
    noise: Noise | None = None

    def rounds(self, op: int | None, func) -> str | None:
        """The format the operands of linear op ``op`` (ATen ``func``; None: one inside a decomposed op, rounded
        only where every linear op is) are rounded to; None: not rounded."""
        kind = LINEAR_OPS[func]
        if self.kind_formats is not None:
            return self.kind_formats.get(kind)
        if self.linear_format is None:
            return None
        if self.linear_ops is not None:
            return self.linear_format if op is not None and op in self.linear_ops else None
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
    operands: dict[tuple[int, int], torch.Tensor] = dataclasses.field(default_factory=dict)  # ``record_operands``
    exact: dict[int, tuple[str, torch.Tensor]] = dataclasses.field(default_factory=dict)  # ``record_exact``
    # with ``record_exact``: whether ops ran that round, and each output of each was exact (a mean's by its sum):
    # every legitimate order of the Model's arithmetic gives the same bits, a mean's division aside
    order_free: bool = False
    # set by ``floor.floor_of`` where the operands are rounded: how far their flips alone move each output
    flip_spread: torch.Tensor | None = None


def evaluate(
    model: torch.nn.Module,
    inputs: Sequence,
    arithmetic: Arithmetic,
    *,
    record_scales: bool = False,
    keep_outputs: bool = False,
    record_operands: bool = False,
    record_exact: bool = False,
) -> Evaluation:
    """``model(*inputs)`` under ``arithmetic``, with no gradients; inputs are copied (a Model that writes into
    its input changes nothing outside). ``record_scales`` keeps each linear op's Σ|w·x| (same precision);
    ``keep_outputs`` a copy of every op's floating output (``trace``: the error op by op, for small Models);
    ``record_operands`` a copy of each computed operand a linear op rounds (``operands``, for ``Noise.operands``);
    ``record_exact`` the outputs each op computes exactly in fp32 in any order (``exact``, for ``Noise.exact``: an
    fp64 evaluation only, whose dispatches a noise run repeats one for one)."""
    copies = [t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]
    if arithmetic.dtype == torch.float64:
        copies = [_upcast_value(t) for t in copies]
    interposer = _Interposer(arithmetic, model, record_scales, keep_outputs)
    interposer.record_operands = record_operands
    if record_exact and arithmetic.dtype == torch.float64 and arithmetic.autocast is None:
        interposer.exact_results = {}
    with (
        torch.no_grad(),
        kept(model),  # what the Model keeps between calls, as this evaluation found it: each starts where the trial did
        _fused_modules_op_by_op(model),
        _module_names(model, interposer.modules),
        _parameters_in(model, arithmetic.dtype),
    ):
        interposer.exact = exact_storages([*model.parameters(), *model.buffers(), *copies])
        with interposer:
            output = model(*copies)
        if isinstance(output, torch.Tensor) and output.untyped_storage().data_ptr() in state_storages(model):
            output = output.clone()  # the Model's own tensor (a buffer it writes and returns): put back on leaving
    if not isinstance(output, torch.Tensor):
        raise TypeError(f"the Model returned a {type(output).__name__}, not a tensor")
    return Evaluation(
        output,
        interposer.ops,
        interposer.scales,
        interposer.rounded,
        interposer.trace,
        interposer.operands,
        interposer.exact_results or {},
        interposer.rounding[0] > 0 and interposer.rounding[0] == interposer.rounding[1],
    )


@contextlib.contextmanager
def interposed(arithmetic: Arithmetic):
    """A block in which every ATen op runs under ``arithmetic`` (yields the interposer: ``rounded`` counts the
    linear ops whose operands it rounded, ``ops`` records what ran); for running user code as it stands."""
    interposer = _Interposer(arithmetic, torch.nn.Module(), record_scales=False)
    with interposer:
        yield interposer


@contextlib.contextmanager
def _fused_modules_op_by_op(model: torch.nn.Module):
    """PyTorch's fused fast paths off while the block runs, where the Model has them: oneDNN's and cuDNN's fused RNN,
    LSTM and GRU recurrences (``mkldnn_rnn_layer``, ``_cudnn_rnn``), and the inference fast path of MultiheadAttention
    and the Transformer layers (``_native_multi_head_attention``, ``_transformer_encoder_layer_fwd``).
    fp32 would take them as one op where fp64 takes PyTorch's own op-by-op path, and only that one shows each
    product, sum and activation to the floor and the rewrites. The fused kernels compute the same function (their
    own sums' order), so the reference's output is judged against it."""
    recurrent = any(isinstance(m, torch.nn.RNNBase) for m in model.modules())
    fastpath = torch.backends.mha.get_fastpath_enabled()
    onednn = torch._C._get_mkldnn_enabled()  # mkldnn.flags() would also set oneDNN's TF32, and warn on a CPU
    torch.backends.mha.set_fastpath_enabled(False)
    if recurrent:
        torch._C._set_mkldnn_enabled(False)
    try:
        # attention by its math path in every precision: a GPU's flash and memory-efficient kernels take no fp64
        with (
            torch.backends.cudnn.flags(enabled=False) if recurrent else contextlib.nullcontext(),
            sdpa_kernel(SDPBackend.MATH),
        ):
            yield
    finally:
        torch._C._set_mkldnn_enabled(onednn)
        torch.backends.mha.set_fastpath_enabled(fastpath)


@contextlib.contextmanager
def _parameters_in(model: torch.nn.Module, dtype: torch.dtype):
    """For fp64, the Model's floating parameters, buffers and tensors held as plain attributes (a hidden state) as
    float64 copies while the block runs, the originals put back after: PyTorch checks that a conv's input and weight
    agree in dtype before the dispatcher (and so the interposer) sees the op, running statistics updated in fp64
    must not change the Model, and a write in place into a float32 state (``self.hidden.copy_(h0)``) would go to
    the interposer's float64 copy of it and be lost, the rest of the evaluation reading the state unwritten."""
    if dtype != torch.float64:
        yield
        return
    held = [*model.parameters(), *model.buffers(), *attribute_tensors(model)]
    tensors = list({id(t): t for t in held if t.is_floating_point()}.values())
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


class _Interposer(EagerDispatchMode):
    def __init__(self, arithmetic: Arithmetic, model: torch.nn.Module, record_scales: bool, keep: bool = False):
        super().__init__()
        resolve_dynamo_guards()  # the decompositions' first calls would import torch._dynamo, seconds of a job
        self.arithmetic = arithmetic
        self.record_scales = record_scales
        self.keep = keep
        self.trace: dict[int, torch.Tensor] = {}
        self.ops: list[OpRecord] = []
        self.scales: dict[int, torch.Tensor] = {}
        self.modules: list[tuple[str, str]] = []
        self.model_type = type(model).__name__
        self.rounded = 0
        self.depth = 0  # how deep inside decomposed ops the op being dispatched is
        self.exact: dict[int, int] = {}  # storages a kernel reads as we do, and their versions (``operand_flips``)
        self.record_operands = False
        self.operands: dict[tuple[int, int], torch.Tensor] = {}
        self.autocast = Autocast(arithmetic.autocast, arithmetic.whole) if arithmetic.autocast else None
        self.dispatched = 0  # ops dispatched so far, those inside decomposed ops too: each one's number
        self.exact_results: dict[int, tuple[str, torch.Tensor]] | None = None  # ``evaluate``'s ``record_exact``
        self.rounding = [0, 0]  # with ``record_exact``: the ops that round, and those exact at every output

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        a = self.arithmetic
        inner = self.depth > 0  # an op inside a decomposed one: not recorded, no index of its own
        index = None if inner else len(self.ops)
        number, self.dispatched = self.dispatched, self.dispatched + 1
        if a.dtype == torch.float64:
            args, kwargs = _upcast(args), _upcast_kwargs(kwargs)
        kind = kind_of(func)
        name = func.overloadpacket.__name__
        decomposed, flips = False, None
        if kind is OpKind.LINEAR and a.rounds(index, func):
            out = self._rounded_linear(func, args, kwargs, a.rounds(index, func))
            if self.record_operands and not inner:
                record_operands(self.operands, index, args, multiplied(func), self.exact)
            if a.noise is not None and not inner:  # operands a kernel may round the other way (``operand_flips``)
                if a.noise.flips_only:
                    flips = flip_effect(func, args, kwargs, a.rounds(index, func), a.linear_rounding, index,
                                        a.noise)  # fmt: skip
                else:
                    record_deviation(a.noise, index, args, multiplied(func))
        elif self.autocast is not None:
            self.rounded += name in LOWER_OPS
            out = self.autocast.run(name, args, kwargs, lambda given, named: _run(func, given, named))
        elif index in a.forms:
            out = FORMS[name][a.forms[index]][1](func, args, kwargs)
        elif a.fast_math and name.rstrip("_") in fast_math.EMULATED:
            out = fast_math.EMULATED[name.rstrip("_")](*args, **kwargs)
            if name.endswith("_"):  # in place: the caller reads its first operand
                out = args[0].copy_(out)
        elif a.reduction_order and name in _ORDERED and not name.endswith("_") and _floating(args):
            out = ordered_op(func, name, args, kwargs, a.reduction_order)
        elif a.reduction_order == "sequential" and func in _PRODUCTS:
            out = ordered_matrix_product(func, args, kwargs)
        elif (a.dtype == torch.float64 or a.noise) and name in DECOMPOSED:
            decomposed = True
            self.depth += 1
            try:
                with self:  # its ops come back through this interposer, each rounded and perturbed on its own
                    if func in decomposition_table:
                        out = decomposition_table[func](*args, **kwargs)
                    else:  # a CompositeImplicitAutograd op that a decomposition calls by name
                        out = func.decompose(*args, **kwargs)
            finally:
                self.depth -= 1
            if out is NotImplemented:  # no decomposition on this build: the op whole, rounded once
                decomposed, out = False, _run(func, args, kwargs)
        else:
            out = _run(func, args, kwargs)
        if kind is OpKind.LINEAR and self.record_scales and not inner:
            self.scales[index] = on_magnitudes(func, args, kwargs)
        if self.exact_results is not None and not decomposed:
            self._record_exact(func, name, kind, index, args, kwargs, out, number)
        if a.noise is not None and not decomposed:
            out = self._with_noise(func, kind, index, args, kwargs, out, flips, number)
        if not inner:
            self._record(func, name, kind, args, kwargs, out)
        return out

    def _record_exact(self, func, name: str, kind: OpKind, index, args, kwargs, out, number: int) -> None:
        """Keeps which outputs of dispatch ``number`` fp32 computes exactly in any order (``exactness``), and counts
        the ops that round, with those exact throughout (a mean by its sum: ``order_free``);
        under fast-math none of a transcendental op's (``__powf`` squares inexactly). What exactness cannot tell
        (an op it does not take) is not exact: the floor keeps that op's rounding."""
        if self.arithmetic.fast_math and kind is OpKind.TRANSCENDENTAL:
            return
        scale, rounds = None, None
        if kind is OpKind.LINEAR:
            rounds = self.arithmetic.rounds(index, func)
            scale = self.scales.get(index) if index is not None else None
            if scale is None:  # taken only where the operands' grids do not already rule exactness out
                scale = lambda: on_magnitudes(func, args, kwargs)  # noqa: E731
        try:
            rounding = (rounds, self.arithmetic.linear_rounding) if rounds else None
            mask = exact_results(func, name, args, kwargs, out, scale, rounding)
            summed = exact_results(func, name, args, kwargs, out, means=True) if name == "mean" else mask
        except Exception:  # an operand exactness does not read (a bool mask summed as float): its rounding stays
            mask = summed = None
        if mask is not None:
            self.exact_results[number] = (name, mask)
        if kind not in (OpKind.EXACT, OpKind.RANDOM):  # an op that rounds
            self.rounding[0] += 1
            self.rounding[1] += summed is not None and bool(summed.all())

    def _with_noise(self, func, kind: OpKind, index, args, kwargs, out, flips=None, number=None):
        """``out`` with the rounding error ``Noise`` gives op ``func`` (each floating tensor of a tuple: a var_mean),
        and ``flips`` more: what its operands that may round the other way move it by (``operand_flips``); none of
        its own at the outputs the evaluation without noise found exact (``Noise.exact``, by dispatch ``number``)."""
        if isinstance(out, (tuple, list)):
            return tuple(self._with_noise(func, kind, index, args, kwargs, o) for o in out)
        if not isinstance(out, torch.Tensor) or not out.is_floating_point():
            return out
        name = func.overloadpacket.__name__
        noise = self.arithmetic.noise
        if noise.flips_only:  # the run that moves each output by its operands' flips alone: all one way (``sign``),
            return out if flips is None else out + (flips * noise.signs_like(flips)).to(out.dtype)  # or at random
        # a fast-math op errs by up to its measured residual, in units of u·(|f(x)| + |x|) as the probe measures
        # it: the floor allows ``amplitude`` × σ, so σ is that residual over the amplitude (at least the op's
        # own rounding)
        fast = noise.fast_math and kind is OpKind.TRANSCENDENTAL
        if noise.only_fast and not fast:
            return out
        times_g = name.rstrip("_") in _X_TIMES_G or (fast and name.rstrip("_") not in _RELATIVE_FAST)
        operand = args[0] if times_g and args and isinstance(args[0], torch.Tensor) else None
        if operand is not None and operand.shape != out.shape:  # a reduction (logsumexp): |f(x)| alone
            operand = None
        terms = terms_of(func, args) if kind is OpKind.LINEAR else 1
        ulps = max(1.0, fast_math.residual_units(name, kwargs) / noise.amplitude) if fast else 1.0
        unit = self.autocast.unit(out) if self.autocast is not None else 0.0
        scale = None
        if kind is OpKind.LINEAR:
            scale = noise.scales.get(index) if index is not None else None
            if scale is None:  # one inside a decomposed op (attention's products): its Σ|w·x| here
                scale = on_magnitudes(func, args, kwargs)
        elif kind is OpKind.REDUCTION and noise.any_order and name in _ORDERED and _floating(args):
            dims, keepdim = summed_dims(name, args, kwargs)
            scale = sequential_error_scale(name, args[0], dims, keepdim)
        elif kind is OpKind.PRODUCT and _floating(args):
            scale = product_error_scale(name, out, args[0], summed_dims(name, args, kwargs)[0])
        elif kind is OpKind.REDUCTION:
            scale = on_magnitudes(func, args, kwargs)  # Σ|x| over what it sums (its mean for a mean)
            if not isinstance(scale, torch.Tensor) or scale.shape != out.shape:
                scale = None
            elif isinstance(args[0], torch.Tensor):
                terms = max(1, args[0].numel() // max(1, out.numel()))
        exact = noise.exact.get(number)
        exact = exact[1] if exact is not None and exact[0] == name and exact[1].shape == out.shape else None
        error = self._rounding_error(kind, out, operand, terms, ulps, unit, scale)
        if error is not None and exact is not None and not unit:
            error = error.masked_fill(exact, 0.0)
        if error is None:
            moved = out
        else:  # an in-place op's caller reads its first operand
            moved = out.add_(error) if name.endswith("_") else out + error
        return moved if self.autocast is None else self.autocast.carry(out, moved)

    def _record(self, func, name: str, kind: OpKind, args, kwargs, out) -> None:
        module, module_type = self.modules[-1] if self.modules else ("", self.model_type)
        first = out[0] if isinstance(out, (tuple, list)) and out else out
        shape = tuple(first.shape) if isinstance(first, torch.Tensor) else ()
        terms = terms_of(func, args) if kind is OpKind.LINEAR else 0
        if self.keep and isinstance(out, torch.Tensor) and out.is_floating_point():
            self.trace[len(self.ops)] = out.detach().clone()
        record = OpRecord(len(self.ops), name, kind, module, module_type, shape, detail_of(func, args, kwargs), terms)
        self.ops.append(record)

    def _rounded_linear(self, func, args, kwargs, fmt: str):
        """The linear op with its two multiplied operands rounded to ``fmt`` (through fp32, as a kernel
        reading fp32 tensors would round them); a bias or an addmm's added matrix is not rounded."""
        self.rounded += 1
        positions = multiplied(func)
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

    def _rounding_error(
        self, kind: OpKind, out: torch.Tensor, operand, terms: int, ulps: float, unit: float, scale
    ) -> torch.Tensor | None:
        """What ``out`` moves by: its rounding error (``Noise``), and ``unit``·|out| more where its result is rounded
        to a reduced format (autocast's), a rounding that may go either way; None for an op that rounds nothing.
        ``scale``: a linear op's Σ|w·x| or a reduction's Σ|x|, the size of its error (each of its ``terms`` sums may
        also underflow)."""
        noise = self.arithmetic.noise
        if kind is OpKind.RANDOM or (kind is OpKind.EXACT and not unit):
            return None
        signs = noise.signs_like(out)
        if kind is OpKind.EXACT:  # rounds nothing of its own: only the format's rounding of what it was given
            error = noise.amplitude * unit * out.abs() * signs
        elif scale is not None:  # each of its K products and sums may underflow
            error = noise.amplitude * (_U32 * scale.to(out.dtype) + terms * _ETA32) * signs
        else:
            size = out.abs() if operand is None else out.abs() + operand.abs().to(out.dtype)
            error = noise.amplitude * ulps * (_U32 * size + _ETA32) * signs
        if unit and kind is not OpKind.EXACT:
            error = error + noise.amplitude * unit * out.abs() * signs
        # an infinite result (a mask's −inf before softmax) rounds to itself: ±inf moved by ∓inf would be NaN
        return torch.where(torch.isfinite(error) & torch.isfinite(out), error, torch.zeros_like(error))


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


def _floating(args) -> bool:
    """Whether the op's first operand is a floating tensor (an integer sum or product rounds nothing)."""
    return bool(args) and isinstance(args[0], torch.Tensor) and args[0].is_floating_point()
