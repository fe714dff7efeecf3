"""A user's Model as a search space: constructor arguments and input shapes drawn like the ones the problem gives.

KernelBench constructors take ints where a module wants tuples (``kernel_size=3`` → ``nn.Conv3d(…, (k, k, 1))``),
shapes for extra parameters (``bias_shape=(C, 1, 1)``), floats (``scaling_factor``) and counts (``num_groups``)
(shared/facts/kernelbench_conv_families.md). Drawing PyTorch's conv arguments with PyTorch's types hands such a
constructor values it cannot take, so here each argument is drawn *like the value* ``get_init_inputs()`` gives it:

- an int stays an int and a tuple keeps its length; what an int means is read from its name (``Role``);
- channel counts are drawn as multiples of the groups the conv and a GroupNorm need, and a ``*_shape`` tuple
  whose entries equal the base channel counts follows the drawn ones (a ``bias_shape`` of (C, 1, 1) stays
  (C', 1, 1));
- floats keep their sign and order (a clamp's min stays below its max) within a factor 4 of their value;
  bools take either value; anything else (strings, ``dim``, counts with no known meaning) keeps its value.

Structural arguments (kernel, stride, padding, dilation, floats) shrink towards ``get_init_inputs()``'s values;
sizes (channels, batch, spatial extents) and group counts towards small ones. Input shapes are drawn once the
reference Model is built, from the conv it actually holds: batch, the conv's ``in_channels``, and spatial extents
from the smallest the conv accepts, so few draws are configurations the conv refuses. Whatever the Model still
refuses (``Refused``) is filtered by the caller (``fp_analysis.fuzz.search``).
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from enum import Enum
from typing import Any

import torch
from hypothesis import assume
from hypothesis import strategies as st
from torch import nn

from ..errors import FpaError
from ..ops.conv import ConvSpec, spec_of_module

__all__ = [
    "Argument",
    "ModelSpace",
    "Refused",
    "Role",
    "TooLarge",
    "conv_modules",
    "describe_convs",
    "first_conv_macs",
    "role_of",
]

# Per spatial dim, how far above its smallest accepted extent an input extent is drawn: mostly within the
# first span (fewer steps in more dims keep one example near the same size), sometimes within the second, so
# the edges of the 16- and 32-wide tiles kernels use are crossed too.
_EXTENT_SPANS = {1: (16, 96), 2: (8, 40), 3: (5, 20)}
_BATCHES = (1, 3)
# Channel counts are a multiple of the groups they must divide: mostly 1–3 of it, sometimes up to 16 (past
# the 4, 8 and 16-channel tiles of kernels), or the problem's own count when it is at most this.
_MAX_BASE_CHANNELS = 128
# Multiply-adds of the first conv allowed in one example: a CPU evaluates a few million in fp64 in
# milliseconds, and the analysis evaluates the Model about a dozen times.
MAX_MACS = 3_000_000
_CONV_TYPES = (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)


class Refused(Exception):
    """The problem's own Model refuses a drawn configuration (raises on it, or its conv's shape check would):
    not an example."""


class Role(str, Enum):
    """What a constructor argument means, read from its name and the type of its value."""

    IN_CHANNELS = "in_channels"
    """The conv's input channels: a multiple of its groups, drawn small."""
    OUT_CHANNELS = "out_channels"
    """The conv's output channels: a multiple of its groups and of a GroupNorm's, drawn small."""
    GROUPS = "groups"
    """The conv's groups (``groups``): 1, 2, 3 or its value, shrinking towards 1."""
    NORM_GROUPS = "norm_groups"
    """Groups of a normalisation over the output channels (``num_groups``): 1, 2, 4 or its value, shrinking
    towards 1."""
    KERNEL = "kernel"
    """A kernel or pooling window extent (``kernel_size``, ``pool_kernel_size``, ``pool_size``): 1 to 4; an
    extent of 1 in a tuple stays 1."""
    STRIDE = "stride"
    """A stride: 1 to 3."""
    PADDING = "padding"
    """A padding: 0 to 3."""
    OUTPUT_PADDING = "output_padding"
    """A transposed conv's output padding: 0 up to below the larger of its stride and dilation, per dim."""
    DILATION = "dilation"
    """A dilation: 1 to 3."""
    SHAPE = "shape"
    """A parameter's shape (``bias_shape``): entries equal to a channel count follow it, the rest stay."""
    SCALAR = "scalar"
    """A float: same sign, within a factor 4, in the order of the other floats; 0 stays 0."""
    FLAG = "flag"
    """A bool: either value."""
    KEPT = "kept"
    """Anything else (strings, ``dim``, ints of no known meaning): its value from ``get_init_inputs()``."""


_INT_RANGES = {
    Role.KERNEL: (1, 4),
    Role.STRIDE: (1, 3),
    Role.PADDING: (0, 3),
    Role.DILATION: (1, 3),
}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_int_tuple(value: Any) -> bool:
    return isinstance(value, (tuple, list)) and len(value) > 0 and all(_is_int(v) for v in value)


def role_of(name: str, value: Any) -> Role:
    """The role of constructor argument ``name`` whose value (from ``get_init_inputs()`` or its default) is
    ``value``. Names decide among ints and int tuples, as KernelBench problems name them; a value of another
    type decides by its type alone."""
    if isinstance(value, bool):
        return Role.FLAG
    if isinstance(value, float):
        return Role.SCALAR
    if not (_is_int(value) or _is_int_tuple(value)):
        return Role.KEPT
    key = name.lower()
    if key.endswith("shape"):
        return Role.SHAPE if _is_int_tuple(value) else Role.KEPT
    if key == "in_channels":
        return Role.IN_CHANNELS
    if key == "out_channels":
        return Role.OUT_CHANNELS
    if key == "groups":
        return Role.GROUPS
    if key.endswith("groups"):
        return Role.NORM_GROUPS if _is_int(value) else Role.KEPT
    for word, role in (
        ("output_padding", Role.OUTPUT_PADDING),
        ("padding", Role.PADDING),
        ("stride", Role.STRIDE),
        ("dilation", Role.DILATION),
        ("kernel", Role.KERNEL),
        ("pool", Role.KERNEL),
    ):
        if word in key:
            return role
    return Role.KEPT


@dataclass(frozen=True)
class Argument:
    """One parameter of ``Model.__init__``: its name, kind, the value the problem gives it and its role."""

    name: str
    kind: inspect._ParameterKind
    base: Any
    role: Role


def conv_modules(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """The Model's conv-family modules (Conv1d/2d/3d, ConvTranspose1d/2d/3d), named, in registration order."""
    return [(name, m) for name, m in model.named_modules() if isinstance(m, _CONV_TYPES)]


def describe_convs(model: nn.Module, input_shape: tuple[int, ...] | None = None) -> list[str]:
    """Each conv of ``model`` in conv terms: kind, channels, kernel, stride, padding, output padding, dilation,
    groups, bias; the first one also with its input and output shape when ``input_shape`` is given."""
    lines = []
    for i, (name, conv) in enumerate(conv_modules(model)):
        parts = [
            f"{type(conv).__name__} `{name}`: {conv.in_channels}→{conv.out_channels} channels",
            f"kernel {tuple(conv.kernel_size)}",
            f"stride {tuple(conv.stride)}",
            f"padding {conv.padding if isinstance(conv.padding, str) else tuple(conv.padding)}",
        ]
        if conv.transposed:
            parts.append(f"output_padding {tuple(conv.output_padding)}")
        parts += [
            f"dilation {tuple(conv.dilation)}",
            f"groups {conv.groups}",
            "bias" if conv.bias is not None else "no bias",
        ]
        if i == 0 and input_shape is not None:
            try:
                out = spec_of_module(conv).output_shape(tuple(input_shape))
                parts.append(f"input {tuple(input_shape)} → output {tuple(out)}")
            except Exception:  # a shape the conv refuses is described by what the Model raised instead
                parts.append(f"input {tuple(input_shape)}")
        lines.append(", ".join(parts))
    return lines


class ModelSpace:
    """The constructor arguments and input shapes of one problem, as Hypothesis strategies.

    ``signature`` is ``Model.__init__``'s, ``init`` what ``get_init_inputs()`` returned, ``inputs`` what
    ``get_inputs()`` returned, ``instance`` the Model built from ``init``. Only the arguments named in
    ``drawn`` are drawn (by default every one whose role is not ``KEPT``); the rest keep their values.
    """

    def __init__(self, signature: inspect.Signature, init: list, inputs: list, instance: nn.Module, drawn=None):
        params = [p for name, p in signature.parameters.items() if name != "self"]
        bound = signature.bind(None, *init)
        bound.apply_defaults()
        values = {k: v for k, v in bound.arguments.items() if k != "self"}
        self.given = [p.name for p in params][: len(init)]
        self.arguments = [
            Argument(p.name, p.kind, values[p.name], role_of(p.name, values[p.name]))
            for p in params
            if p.name in values and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        # What a constructor's *args and **kwargs received: passed on as they are, never drawn.
        self.var_args = tuple(next((values[p.name] for p in params if p.kind is p.VAR_POSITIONAL), ()))
        self.var_kwargs = dict(next((values[p.name] for p in params if p.kind is p.VAR_KEYWORD), {}))
        names = {a.name for a in self.arguments if a.role is not Role.KEPT}  # what is kept is not drawn
        self.drawn = names if drawn is None else set(drawn) & names
        self.base_inputs = [tuple(t.shape) if isinstance(t, torch.Tensor) else None for t in inputs]
        self.base_values = list(inputs)
        # The input the first conv reads: the first floating-point tensor.
        self.lead = next(
            (i for i, t in enumerate(inputs) if isinstance(t, torch.Tensor) and t.is_floating_point()), None
        )
        convs = conv_modules(instance)
        conv = convs[0][1] if convs else None
        # Counts that divide channel counts, where each comes from: an argument's drawn value, or fixed.
        self.conv_groups = self._source(conv.groups if conv is not None else 1, (Role.GROUPS, Role.IN_CHANNELS))
        self.norm_groups = [
            self._source(m.num_groups, (Role.NORM_GROUPS, Role.GROUPS))
            for m in instance.modules()
            if isinstance(m, nn.GroupNorm)
        ]
        # What bounds output_padding where stride or dilation is not an argument: the first conv's values.
        self.fixed_reach = {
            "stride": tuple(conv.stride) if conv is not None else (1,),
            "dilation": tuple(conv.dilation) if conv is not None else (1,),
        }
        self.base_conv_output = None  # the first conv's output on the problem's input: later inputs may follow it
        if conv is not None and self.lead is not None and len(self.base_inputs[self.lead]) == conv.weight.dim():
            try:
                self.base_conv_output = spec_of_module(conv, shapes_only=True).output_shape(self.base_inputs[self.lead])
            except FpaError:
                pass

    def _source(self, count: int, roles: tuple[Role, ...]) -> tuple[str, Any]:
        """Where a group count comes from: ("argument", name) when the argument of role ``roles[0]`` has it as
        its value, or, for a count above 1, an argument of another of ``roles`` (``groups=in_channels`` makes a
        conv depthwise; GroupNorm's count may be called ``groups``); else ("fixed", count)."""
        for role in roles:
            for a in self.arguments:
                if a.role is role and a.base == count and a.name in self.drawn and (count > 1 or role is roles[0]):
                    return ("argument", a.name)
        return ("fixed", count)

    # -- the constructor ---------------------------------------------------------------------------------------

    def base(self) -> dict:
        """The arguments as ``get_init_inputs()`` gives them (defaults for the rest), in the user's names."""
        return {a.name: a.base for a in self.arguments}

    def defaulted(self) -> list[str]:
        """The drawn arguments ``get_init_inputs()`` does not give (KernelBench passes only what it gives)."""
        return [a.name for a in self.arguments if a.name in self.drawn and a.name not in self.given]

    def call(self, values: dict) -> tuple[list, dict]:
        """(args, kwargs) for ``Model(*args, **kwargs)`` with ``values``: positional parameters by position, as
        KernelBench calls ``Model(*get_init_inputs())``, up to the last one given or drawn (so a constructor
        that takes only what ``get_init_inputs()`` gives is called with just that); keyword-only ones by name;
        what ``*args`` and ``**kwargs`` took, as they took it."""
        values = {**self.base(), **values}
        passed = set(self.given) | self.drawn
        positional = [a for a in self.arguments if a.kind is not inspect.Parameter.KEYWORD_ONLY]
        last = (
            len(positional) - 1
            if self.var_args
            else max((i for i, a in enumerate(positional) if a.name in passed), default=-1)
        )
        args = [values[a.name] for a in positional[: last + 1]] + list(self.var_args)
        kwargs = {
            a.name: values[a.name]
            for a in self.arguments
            if a.kind is inspect.Parameter.KEYWORD_ONLY and a.name in passed
        }
        return args, {**kwargs, **self.var_kwargs}

    def arguments_strategy(self) -> st.SearchStrategy[dict]:
        """Constructor arguments in the user's names: those drawn, the others at their values."""
        return _arguments(self)

    # -- the inputs ---------------------------------------------------------------------------------------------

    def inputs_strategy(self, instance: nn.Module) -> st.SearchStrategy[list]:
        """Input shapes (None for an input that is not a tensor) for the Model ``instance``: see the module
        docstring."""
        return _input_shapes(self, instance)


def _around(base: int, low: int, high: int) -> st.SearchStrategy[int]:
    """An int in [low, high], or ``base``, shrinking towards ``base``."""
    return st.one_of(st.just(base), st.integers(low, max(high, low)))


def _counts(*values: int) -> list[int]:
    """Group counts to draw from, smallest first (fewer groups allow fewer channels, so they shrink there)."""
    return sorted(set(values))


def _drawn_like(draw, base, element):
    """``base``'s type and length: one draw of ``element(base)`` for an int, one per entry for a tuple or list."""
    if _is_int(base):
        return draw(element(base))
    return type(base)(draw(element(b)) for b in base)


def _ints(value) -> list[int]:
    return [value] if _is_int(value) else list(value)


@st.composite
def _arguments(draw, space: ModelSpace) -> dict:
    values = space.base()
    drawn = [a for a in space.arguments if a.name in space.drawn]
    for a in drawn:
        if a.role is Role.KERNEL and not _is_int(a.base):
            # An extent of 1 in a kernel tuple is its form, not a size: a (k, k, 1) kernel keeps its depth 1.
            values[a.name] = _drawn_like(draw, a.base, lambda b: st.just(1) if b == 1 else _around(b, 1, 4))
        elif a.role in _INT_RANGES:
            low, high = _INT_RANGES[a.role]
            values[a.name] = _drawn_like(draw, a.base, lambda b, low=low, high=high: _around(b, low, high))
        elif a.role is Role.GROUPS:
            values[a.name] = _drawn_like(draw, a.base, lambda b: st.sampled_from(_counts(1, 2, 3, b)))
        elif a.role is Role.NORM_GROUPS:
            values[a.name] = draw(st.sampled_from(_counts(1, 2, 4, a.base)))
        elif a.role is Role.FLAG:
            values[a.name] = draw(st.sampled_from([a.base, not a.base]))
    # The conv's own stride and dilation bound its output_padding (not a pooling's stride).
    reaches = [_ints(values[n]) if n in space.drawn else list(space.fixed_reach[n]) for n in ("stride", "dilation")]
    for a in drawn:
        if a.role is Role.OUTPUT_PADDING:
            values[a.name] = _output_padding(draw, a.base, reaches)
    in_arg = next((a for a in drawn if a.role is Role.IN_CHANNELS), None)
    out_arg = next((a for a in drawn if a.role is Role.OUT_CHANNELS), None)
    depthwise = in_arg is not None and space.conv_groups == ("argument", in_arg.name)
    if in_arg is not None:
        unit = 1 if depthwise else math.lcm(*_ints(_count(space.conv_groups, values)))
        values[in_arg.name] = draw(_channels(in_arg.base, unit))
    if out_arg is not None:
        counts = [space.conv_groups, *space.norm_groups]
        unit = math.lcm(*(n for source in counts for n in _ints(_count(source, values))))
        values[out_arg.name] = draw(_channels(out_arg.base, unit))
    channels = {}  # base channel count → drawn one; out_channels first, as extra parameters follow the output
    for a in (out_arg, in_arg):
        if a is not None and a.base != 1:  # a 1 in a shape is a broadcast dim, whatever the channels
            channels.setdefault(a.base, values[a.name])
    for a in drawn:
        if a.role is Role.SHAPE:
            values[a.name] = type(a.base)(channels.get(n, n) for n in a.base)
    scalars = [a for a in drawn if a.role is Role.SCALAR]
    for a in scalars:
        values[a.name] = draw(_scalar(a.base))
    for a in scalars:  # keep the order the problem gives its floats (a clamp's min below its max)
        for b in scalars:
            if a.base < b.base:
                assume(values[a.name] < values[b.name])
    return values


def _count(source: tuple[str, Any], values: dict):
    """A group count from its source (``ModelSpace._source``) given the drawn argument values."""
    kind, what = source
    return values[what] if kind == "argument" else what


def _output_padding(draw, base, reaches: list[list[int]]):
    """An output padding of ``base``'s form below max(stride, dilation) in each dim (PyTorch refuses more:
    ATen's conv_transpose shape check); ``base`` itself where it fits, as it shrinks towards it."""
    dims = max(len(r) for r in reaches) if _is_int(base) else len(base)

    def limit(d: int) -> int:
        return max(r[d] if d < len(r) else r[0] for r in reaches) - 1

    if _is_int(base):
        top = min(limit(d) for d in range(dims))
        return draw(_around(base, 0, top)) if base <= top else draw(st.integers(0, top))
    return type(base)(
        draw(_around(b, 0, limit(d)) if b <= limit(d) else st.integers(0, limit(d))) for d, b in enumerate(base)
    )


def _channels(base: int, unit: int) -> st.SearchStrategy[int]:
    """A multiple of ``unit``: 1–3 of it, shrinking towards 1; or 4–16 of it; or ``base`` where it is one."""
    choices = [st.integers(1, 3), st.integers(4, 16)]
    if base % unit == 0 and base <= _MAX_BASE_CHANNELS:
        # Not st.just: a branch that draws nothing is the simplest to Hypothesis, so sizes would shrink to it.
        choices.append(st.booleans().map(lambda _: base // unit))
    return st.one_of(*choices).map(lambda n: n * unit)


def _scalar(base: float) -> st.SearchStrategy[float]:
    """``base``, or a float of its sign within a factor 4 of it; 0 (a slope, a bound) and non-finite stay."""
    if base == 0 or not math.isfinite(base):
        return st.just(base)
    low, high = sorted((base / 4, base * 4))
    return st.one_of(st.just(base), st.floats(low, high, allow_nan=False, allow_infinity=False))


def _smallest_extents(spec: ConvSpec) -> list[int]:
    """Per spatial dim, the smallest input extent the conv gives an output of at least one element for
    (PyTorch's output-size formulas, torch.nn.Conv*d / ConvTranspose*d documentation)."""
    lows = []
    for d in range(spec.spatial_dims):
        before, after = spec.padding[d]
        reach = spec.dilation[d] * (spec.kernel_size[d] - 1)
        if spec.transposed:
            # out = (e − 1)·s − before − after + reach + output_padding + 1 ≥ 1
            need = before + after - reach - spec.output_padding[d]
            lows.append(max(1, 1 + -(-need // spec.stride[d])))
        else:
            lows.append(max(1, reach + 1 - before - after))
    return lows


class TooLarge(Exception):
    """A drawn example would exceed ``MAX_MACS``: fpa's own size cap, not the Model's refusal."""


@st.composite
def _input_shapes(draw, space: ModelSpace, instance: nn.Module) -> list:
    shapes: list = [None] * len(space.base_inputs)
    if space.lead is None:
        return shapes
    first = space.base_inputs[space.lead]
    batch = draw(st.integers(*_BATCHES))
    shape = (batch, *first[1:]) if first else ()
    convs = conv_modules(instance)
    conv = convs[0][1] if convs else None
    conv_output = None
    if conv is not None and len(first) == conv.weight.dim():
        try:  # PyTorch checks a transposed conv's output_padding only when it runs: so does the Model
            spec = spec_of_module(conv, shapes_only=True)
        except FpaError as error:
            raise Refused(f"{type(conv).__name__}: {error}") from None
        lows = _smallest_extents(spec)
        near, far = _EXTENT_SPANS[len(lows)]
        extents = [st.one_of(st.integers(low, low + near), st.integers(low + near + 1, low + far)) for low in lows]
        spatial = [draw(e) for e in extents]
        while _macs(spec, (batch, conv.in_channels, *spatial)) > MAX_MACS and any(
            e > low for e, low in zip(spatial, lows, strict=True)
        ):  # halve the widest extent: the configuration as drawn, at a size evaluated in milliseconds
            d = max(range(len(spatial)), key=lambda i: spatial[i] - lows[i])
            spatial[d] = max(lows[d], spatial[d] // 2)
        shape = (batch, conv.in_channels, *spatial)
        macs = _macs(spec, shape)
        if macs > MAX_MACS:
            raise TooLarge(f"the first conv would take {macs} multiply-adds (fpa fuzz's cap: {MAX_MACS})")
        conv_output = spec.output_shape(shape)
    shapes[space.lead] = shape
    for j, base in enumerate(space.base_inputs):
        if j != space.lead and base is not None:
            shapes[j] = _follow(base, first, shape, space.base_conv_output, conv_output)
    return shapes


def first_conv_macs(instance: nn.Module, shape: tuple) -> int:
    """Multiply-adds of the Model's first conv on an input of ``shape`` (0 where it holds none, or the shape is not
    its input's): what ``MAX_MACS`` caps."""
    convs = conv_modules(instance)
    conv = convs[0][1] if convs else None
    if conv is None or len(shape) != conv.weight.dim():
        return 0
    return _macs(spec_of_module(conv, shapes_only=True), shape)


def _macs(spec: ConvSpec, shape: tuple) -> int:
    """Multiply-adds of the conv on an input of ``shape``: each input (transposed) or output (direct) position
    meets every tap of its group's channels."""
    if spec.transposed:
        return math.prod(shape) * spec.out_channels_per_group * spec.taps
    return math.prod(spec.output_shape(shape)) * spec.in_channels_per_group * spec.taps


def _follow(base: tuple, first: tuple, drawn_first: tuple, base_out: tuple | None, drawn_out: tuple | None) -> tuple:
    """A later input's shape: shaped like the first conv's output (a residual added to it, 1s broadcasting) it
    follows the drawn output; otherwise each dim equal to the first input's follows it; the rest stay."""
    if base_out is not None and drawn_out is not None and len(base) == len(base_out):
        if all(n in (m, 1) for n, m in zip(base, base_out, strict=True)):
            return tuple(1 if n == 1 and m != 1 else d for n, m, d in zip(base, base_out, drawn_out, strict=True))
    return tuple(drawn_first[i] if i < len(first) and n == first[i] else n for i, n in enumerate(base))
