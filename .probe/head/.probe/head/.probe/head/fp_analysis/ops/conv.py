"""Convolution specs (the whole family: 1-3 spatial dims, transposed or not): what a convolution is, as data.

A convolution output is a dot product of K = (C_in / groups) · prod(kernel_size) terms plus an
optional bias (PyTorch ``torch.nn.Conv2d`` / ``Conv3d`` documentation, "Shape" and the formula
out(N_i, C_out_j) = bias(C_out_j) + Σ_k weight(C_out_j, k) ⋆ input(N_i, k)). A transposed convolution
(``ConvTranspose1d/2d/3d``) is a sum of products too: output position p receives input position i
through tap t wherever p = i·stride − padding + t·dilation, so each output is the same kind of dot
product, over the (input channel, tap) pairs whose i is a whole number inside the input; the other
terms are zeros. This module describes a convolution as data (``ConvSpec``), built from ``torch.nn``'s
arguments (``conv2d_spec`` …, ``conv_spec`` with a ``ConvGeometry``) or from a module (``spec_of_module``),
validates it the way PyTorch does and infers output shapes exactly as PyTorch does. The K terms of chosen
outputs are ``fp_analysis.ops.terms``'.

Validation happens here, at the public boundary; inner helpers trust validated input.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..errors import ParameterError, ShapeError

__all__ = [
    "ConvGeometry",
    "ConvSpec",
    "conv1d_spec",
    "conv2d_spec",
    "conv3d_kk1_spec",
    "conv3d_spec",
    "conv_spec",
    "conv_transpose1d_spec",
    "conv_transpose2d_spec",
    "conv_transpose3d_spec",
    "spec_of_module",
]

_PADDING_STRINGS = ("same", "valid")


# --------------------------------------------------------------------------------------------------
# Validation helpers (messages name the parameter and what is allowed)
# --------------------------------------------------------------------------------------------------


def _is_int(value: Any) -> bool:
    """True for Python and numpy integers, False for bools (``True`` is not a kernel size)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _positive_int(name: str, value: Any) -> int:
    if not _is_int(value):
        raise ParameterError(f"{name} must be a positive integer, got {value!r} of type {type(value).__name__}")
    if value <= 0:
        raise ParameterError(f"{name} must be a positive integer, got {value}")
    return int(value)


def _int_tuple(name: str, value: Any, nd: int, *, minimum: int) -> tuple[int, ...]:
    """Expand an int or a length-``nd`` sequence of ints to a tuple, as ``torch.nn.modules.utils._ntuple``."""
    allowed = f"an integer or a tuple of {nd} integers, each >= {minimum}"
    if _is_int(value):
        items: tuple[Any, ...] = (value,) * nd
    elif isinstance(value, Sequence) and not isinstance(value, str):
        items = tuple(value)
        if len(items) != nd:
            raise ParameterError(f"{name} must be {allowed}; got {value!r} with {len(items)} entries")
    else:
        raise ParameterError(f"{name} must be {allowed}; got {value!r} of type {type(value).__name__}")
    for item in items:
        if not _is_int(item):
            raise ParameterError(f"{name} must be {allowed}; got {value!r} (entry {item!r} is not an integer)")
        if item < minimum:
            # PyTorch accepts such values in the constructor and refuses them at the call with a RuntimeError
            # ("negative padding is not supported", "non-positive stride is not supported"): same kind here.
            raise ShapeError(f"{name} must be {allowed}; got {value!r}")
    return tuple(int(item) for item in items)


def _resolve_padding(
    padding: Any, kernel_size: tuple[int, ...], stride: tuple[int, ...], dilation: tuple[int, ...]
) -> tuple[tuple[int, int], ...]:
    """Return (before, after) per spatial dim, resolved as ``torch.nn.modules.conv._ConvNd.__init__``.

    'valid' is no padding. 'same' pads a total of dilation·(kernel_size − 1) per dim, total // 2
    before and the rest after (``_ConvNd.__init__``: ``left_pad = total_padding // 2``), and is
    refused for strided convolutions as PyTorch refuses it. An int or tuple is symmetric padding.
    """
    nd = len(kernel_size)
    if isinstance(padding, str):
        if padding not in _PADDING_STRINGS:
            raise ParameterError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
        if padding == "valid":
            return ((0, 0),) * nd
        if any(s != 1 for s in stride):
            raise ParameterError(
                f"padding='same' is not supported for strided convolutions (got stride={stride}); "
                "use stride=1 or give the padding as integers"
            )
        totals = [d * (k - 1) for k, d in zip(kernel_size, dilation, strict=True)]
        return tuple((total // 2, total - total // 2) for total in totals)
    symmetric = _int_tuple("padding", padding, nd, minimum=0)
    return tuple((p, p) for p in symmetric)


def _padding_pairs(value: Any, nd: int) -> tuple[tuple[int, int], ...]:
    """Validate an already-resolved padding: ``nd`` pairs of non-negative ints (before, after)."""
    allowed = f"a tuple of {nd} (before, after) pairs of integers >= 0"
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != nd:
        raise ParameterError(f"padding must be {allowed}; got {value!r}")
    pairs = []
    for pair in value:
        if not isinstance(pair, Sequence) or isinstance(pair, str) or len(pair) != 2:
            raise ParameterError(f"padding must be {allowed}; got {value!r}")
        if not all(_is_int(p) for p in pair):
            raise ParameterError(f"padding must be {allowed}; got {value!r} (non-integer entry)")
        if any(p < 0 for p in pair):
            raise ShapeError(f"negative padding is not supported: padding must be {allowed}; got {value!r}")
        pairs.append((int(pair[0]), int(pair[1])))
    return tuple(pairs)


# --------------------------------------------------------------------------------------------------
# ConvSpec
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConvSpec:
    """A convolution with 1, 2 or 3 spatial dims, transposed or not, every parameter resolved to per-dim tuples.

    ``padding`` holds one (before, after) pair per spatial dim, so the asymmetric padding that
    PyTorch's ``padding='same'`` produces for an even total dilation·(k−1) is representable (a transposed
    convolution takes symmetric integer padding only, as PyTorch's does). ``output_padding`` (transposed
    only) adds that many positions at the end of each output dim. Construct through the ``conv*_spec``
    functions, which resolve ints and padding strings as PyTorch does; direct construction is validated too.
    """

    in_channels: int
    out_channels: int
    kernel_size: tuple[int, ...]
    stride: tuple[int, ...]
    padding: tuple[tuple[int, int], ...]
    dilation: tuple[int, ...]
    groups: int = 1
    bias: bool = True
    transposed: bool = False
    output_padding: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        _positive_int("in_channels", self.in_channels)
        _positive_int("out_channels", self.out_channels)
        if not _is_int(self.groups) or self.groups <= 0:
            raise ParameterError(f"groups must be a positive integer, got {self.groups!r}")
        if self.in_channels % self.groups != 0:
            raise ParameterError(
                f"in_channels must be divisible by groups (in_channels={self.in_channels}, groups={self.groups})"
            )
        if self.out_channels % self.groups != 0:
            raise ParameterError(
                f"out_channels must be divisible by groups (out_channels={self.out_channels}, groups={self.groups})"
            )
        if not isinstance(self.kernel_size, tuple) or len(self.kernel_size) not in (1, 2, 3):
            raise ParameterError(
                f"kernel_size must be a tuple of 1, 2 or 3 positive integers (one per spatial dim); "
                f"got {self.kernel_size!r}"
            )
        nd = len(self.kernel_size)
        object.__setattr__(self, "kernel_size", _int_tuple("kernel_size", self.kernel_size, nd, minimum=1))
        object.__setattr__(self, "stride", _int_tuple("stride", self.stride, nd, minimum=1))
        object.__setattr__(self, "dilation", _int_tuple("dilation", self.dilation, nd, minimum=1))
        object.__setattr__(self, "padding", _padding_pairs(self.padding, nd))
        if not isinstance(self.bias, (bool, np.bool_)):
            raise ParameterError(f"bias must be a bool, got {self.bias!r}")
        if not isinstance(self.transposed, (bool, np.bool_)):
            raise ParameterError(f"transposed must be a bool, got {self.transposed!r}")
        output_padding = self.output_padding if self.output_padding != () else 0
        object.__setattr__(self, "output_padding", _int_tuple("output_padding", output_padding, nd, minimum=0))
        if not self.transposed and any(self.output_padding):
            raise ParameterError(f"output_padding is for transposed convolutions; got {self.output_padding!r}")
        if self.transposed:
            if not self.is_symmetric_padding:
                raise ParameterError(f"a transposed convolution takes symmetric padding; got {self.padding!r}")
            bad = [
                d
                for d in range(nd)
                if not (self.output_padding[d] < self.stride[d] or self.output_padding[d] < self.dilation[d])
            ]
            if bad:
                # PyTorch's words (ATen's conv_transpose shape check), as a RuntimeError like it.
                raise ShapeError(
                    "output padding must be smaller than either stride or dilation, but got "
                    f"output_padding={self.output_padding}, stride={self.stride}, dilation={self.dilation}"
                )
        object.__setattr__(self, "in_channels", int(self.in_channels))
        object.__setattr__(self, "out_channels", int(self.out_channels))
        object.__setattr__(self, "groups", int(self.groups))
        object.__setattr__(self, "bias", bool(self.bias))
        object.__setattr__(self, "transposed", bool(self.transposed))

    @property
    def name(self) -> str:
        """PyTorch's name for this kind: Conv1d … Conv3d, ConvTranspose1d … ConvTranspose3d."""
        return f"{'ConvTranspose' if self.transposed else 'Conv'}{self.spatial_dims}d"

    # -- derived quantities --------------------------------------------------------------------

    @property
    def spatial_dims(self) -> int:
        """Number of spatial dims (1, 2 or 3)."""
        return len(self.kernel_size)

    @property
    def in_channels_per_group(self) -> int:
        """C_in / groups: the input channels each output channel reads."""
        return self.in_channels // self.groups

    @property
    def out_channels_per_group(self) -> int:
        """C_out / groups."""
        return self.out_channels // self.groups

    @property
    def taps(self) -> int:
        """prod(kernel_size): kernel taps per input channel."""
        return math.prod(self.kernel_size)

    @property
    def K(self) -> int:
        """Terms per output: (C_in / groups) · prod(kernel_size) (bias not counted). For a transposed
        convolution the terms whose input position falls between or outside the inputs are zeros."""
        return self.in_channels_per_group * self.taps

    @property
    def weight_shape(self) -> tuple[int, ...]:
        """The shape of the module's ``weight``: (C_out, C_in / groups, *kernel_size), or for a transposed
        convolution (C_in, C_out / groups, *kernel_size)."""
        if self.transposed:
            return (self.in_channels, self.out_channels_per_group, *self.kernel_size)
        return (self.out_channels, self.in_channels_per_group, *self.kernel_size)

    @property
    def is_symmetric_padding(self) -> bool:
        """True when every spatial dim pads the same amount before and after."""
        return all(before == after for before, after in self.padding)

    def dilated_kernel_size(self) -> tuple[int, ...]:
        """dilation·(k − 1) + 1 per dim: the extent one output reads (PyTorch conv docs, "Shape")."""
        return tuple(d * (k - 1) + 1 for k, d in zip(self.kernel_size, self.dilation, strict=True))

    def same_padding(self) -> tuple[tuple[int, int], ...] | None:
        """Return the padding ``padding='same'`` would give this spec, or None when it is strided."""
        if any(s != 1 for s in self.stride):
            return None
        return _resolve_padding("same", self.kernel_size, self.stride, self.dilation)

    # -- shapes ----------------------------------------------------------------------------------

    def output_shape(self, input_shape: Sequence[int]) -> tuple[int, ...]:
        """Return the output shape (N, C_out, *spatial) torch computes for an input of ``input_shape``.

        Per spatial dim, out = floor((in + pad_before + pad_after − dilation·(k − 1) − 1) / stride) + 1
        (PyTorch ``torch.nn.Conv2d`` docs, "Shape"); transposed, out = (in − 1)·stride − 2·padding +
        dilation·(k − 1) + output_padding + 1 (``torch.nn.ConvTranspose2d`` docs, "Shape"). Errors follow
        ATen's shape checks (aten/src/ATen/native/Convolution.cpp): rank, channel count, zero-size dims, a
        dilated kernel larger than the padded input, an output that is too small. A batch of 0 is allowed.
        """
        shape = self._validated_input_shape(input_shape)
        if self.transposed:
            spatial = tuple(
                (size - 1) * s - before - after + d * (k - 1) + op + 1
                for size, s, (before, after), d, k, op in zip(
                    shape[2:],
                    self.stride,
                    self.padding,
                    self.dilation,
                    self.kernel_size,
                    self.output_padding,
                    strict=True,
                )
            )
            if any(o < 1 for o in spatial):
                raise ShapeError(
                    f"Given input size per channel: ({' x '.join(map(str, shape[2:]))}). Calculated output size "
                    f"per channel: ({' x '.join(map(str, spatial))}). Output size is too small"
                )
            return (shape[0], self.out_channels, *spatial)
        padded = tuple(size + before + after for size, (before, after) in zip(shape[2:], self.padding, strict=True))
        dilated = self.dilated_kernel_size()
        if any(p < k for p, k in zip(padded, dilated, strict=True)):
            raise ShapeError(
                f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                f"Kernel size: ({' x '.join(map(str, dilated))}). "
                "Kernel size can't be greater than actual input size"
            )
        spatial = tuple((p - k) // s + 1 for p, k, s in zip(padded, dilated, self.stride, strict=True))
        return (shape[0], self.out_channels, *spatial)

    def _validated_input_shape(self, input_shape: Sequence[int]) -> tuple[int, ...]:
        rank = 2 + self.spatial_dims
        if isinstance(input_shape, torch.Size):
            input_shape = tuple(input_shape)
        if (
            not isinstance(input_shape, Sequence)
            or isinstance(input_shape, str)
            or not all(_is_int(s) for s in input_shape)
        ):
            raise ShapeError(f"input_shape must be a sequence of {rank} integers (N, C, *spatial); got {input_shape!r}")
        shape = tuple(int(s) for s in input_shape)
        if len(shape) != rank:
            kind = f"conv_transpose{self.spatial_dims}d" if self.transposed else f"conv{self.spatial_dims}d"
            raise ShapeError(f"Expected {rank}D (batched) input to {kind}, but got input of size: {list(shape)}")
        if any(s < 0 for s in shape):
            raise ShapeError(f"input_shape must not have negative sizes, got {list(shape)}")
        if shape[1] != self.in_channels:
            raise ShapeError(
                f"Given groups={self.groups}, weight of size {list(self.weight_shape)}, expected "
                f"input{list(shape)} to have {self.in_channels} channels, but got {shape[1]} channels instead"
            )
        if any(s == 0 for s in shape[2:]):
            raise ShapeError(
                f"Only zero batch or zero channel inputs are supported, but got input shape: {list(shape)}"
            )
        return shape


@dataclass(frozen=True)
class ConvGeometry:
    """Where a convolution's outputs read their inputs, as ``torch.nn``'s Conv modules take it: ``kernel_size``,
    ``stride``, ``padding``, ``dilation`` and (transposed only) ``output_padding``, each an int for every spatial
    dim or a sequence of one per dim; ``padding`` may also be 'same' or 'valid'.

    ``conv_spec`` resolves it for a number of spatial dims, as PyTorch does, into a ``ConvSpec``'s per-dim tuples.
    """

    kernel_size: int | Sequence[int]
    stride: int | Sequence[int] = 1
    padding: int | Sequence[int] | str = 0
    dilation: int | Sequence[int] = 1
    output_padding: int | Sequence[int] = 0


def conv_spec(
    nd: int,
    in_channels: int,
    out_channels: int,
    geometry: ConvGeometry,
    groups: int = 1,
    bias: bool = True,
    *,
    transposed: bool = False,
) -> ConvSpec:
    """Return the ``ConvSpec`` of ``torch.nn.Conv{nd}d`` (or ``ConvTranspose{nd}d``) with the same arguments, its
    ``kernel_size``, ``stride``, ``padding``, ``dilation`` and ``output_padding`` in ``geometry``.

    Ints expand to one value per spatial dim, as ``torch.nn.modules.utils._ntuple`` does. A transposed
    convolution takes integer padding only (PyTorch refuses 'same' and 'valid' there with a TypeError).
    """
    if nd not in (1, 2, 3):
        raise ParameterError(f"Got nd={nd!r}, but the only valid values are 1, 2, 3.")
    if not isinstance(geometry, ConvGeometry):
        raise ParameterError(f"geometry must be a ConvGeometry, got {type(geometry).__name__}")
    if transposed and isinstance(geometry.padding, str):
        raise ParameterError(
            f"Got padding={geometry.padding!r}, but a transposed convolution takes an integer or a tuple of {nd} "
            "integers"
        )
    # Validate the scalar parameters first so that, as in PyTorch, a bad `groups` is reported
    # before anything that depends on it.
    _positive_int("in_channels", in_channels)
    _positive_int("out_channels", out_channels)
    if not _is_int(groups) or groups <= 0:
        raise ParameterError(f"groups must be a positive integer, got {groups!r}")
    kernel = _int_tuple("kernel_size", geometry.kernel_size, nd, minimum=1)
    strides = _int_tuple("stride", geometry.stride, nd, minimum=1)
    dilations = _int_tuple("dilation", geometry.dilation, nd, minimum=1)
    pads = _resolve_padding(geometry.padding, kernel, strides, dilations)
    output_padding = _int_tuple("output_padding", geometry.output_padding, nd, minimum=0)
    return ConvSpec(
        in_channels, out_channels, kernel, strides, pads, dilations, groups, bias, bool(transposed), output_padding
    )


def spec_of_module(module: Any, *, shapes_only: bool = False) -> ConvSpec:
    """The ``ConvSpec`` of a ``torch.nn`` Conv1d/2d/3d or ConvTranspose1d/2d/3d instance, read from its attributes.

    Only zero padding is modelled: another ``padding_mode`` is a ParameterError naming it, unless ``shapes_only``
    (the padding mode changes what is padded in, not the shapes).
    """
    from torch import nn

    kinds = {
        nn.Conv1d: (1, False), nn.Conv2d: (2, False), nn.Conv3d: (3, False),
        nn.ConvTranspose1d: (1, True), nn.ConvTranspose2d: (2, True), nn.ConvTranspose3d: (3, True),
    }  # fmt: skip
    kind = next((v for k, v in kinds.items() if type(module) is k or isinstance(module, k)), None)
    if kind is None:
        raise ParameterError(
            f"Got a {type(module).__name__}, but only torch.nn's Conv and ConvTranspose modules have a spec"
        )
    if module.padding_mode != "zeros" and not shapes_only:
        raise ParameterError(f"Got padding_mode={module.padding_mode!r}, but only 'zeros' is modelled")
    nd, transposed = kind
    geometry = ConvGeometry(
        tuple(module.kernel_size),
        tuple(module.stride),
        module.padding if isinstance(module.padding, str) else tuple(module.padding),
        tuple(module.dilation),
        tuple(module.output_padding) if transposed else 0,
    )
    bias = module.bias is not None
    return conv_spec(nd, module.in_channels, module.out_channels, geometry, module.groups, bias, transposed=transposed)


def conv1d_spec(
    in_channels: int,
    out_channels: int,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] | str = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
    bias: bool = True,
) -> ConvSpec:
    """Return the ``ConvSpec`` of ``torch.nn.Conv1d`` with the same arguments."""
    return conv_spec(1, in_channels, out_channels, ConvGeometry(kernel_size, stride, padding, dilation), groups, bias)


def conv2d_spec(
    in_channels: int,
    out_channels: int,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] | str = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
    bias: bool = True,
) -> ConvSpec:
    """Return the ``ConvSpec`` of ``torch.nn.Conv2d`` with the same arguments (ints expand to pairs)."""
    return conv_spec(2, in_channels, out_channels, ConvGeometry(kernel_size, stride, padding, dilation), groups, bias)


def conv3d_spec(
    in_channels: int,
    out_channels: int,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] | str = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
    bias: bool = True,
) -> ConvSpec:
    """Return the ``ConvSpec`` of ``torch.nn.Conv3d`` with the same arguments (any kernel shape)."""
    return conv_spec(3, in_channels, out_channels, ConvGeometry(kernel_size, stride, padding, dilation), groups, bias)


def conv_transpose1d_spec(
    in_channels: int, out_channels: int, geometry: ConvGeometry, groups: int = 1, bias: bool = True
) -> ConvSpec:
    """Return the ``ConvSpec`` of ``torch.nn.ConvTranspose1d`` with the same arguments, its kernel_size, stride,
    padding, dilation and output_padding in ``geometry``."""
    return conv_spec(1, in_channels, out_channels, geometry, groups, bias, transposed=True)


def conv_transpose2d_spec(
    in_channels: int, out_channels: int, geometry: ConvGeometry, groups: int = 1, bias: bool = True
) -> ConvSpec:
    """Return the ``ConvSpec`` of ``torch.nn.ConvTranspose2d`` with the same arguments, its kernel_size, stride,
    padding, dilation and output_padding in ``geometry``."""
    return conv_spec(2, in_channels, out_channels, geometry, groups, bias, transposed=True)


def conv_transpose3d_spec(
    in_channels: int, out_channels: int, geometry: ConvGeometry, groups: int = 1, bias: bool = True
) -> ConvSpec:
    """Return the ``ConvSpec`` of ``torch.nn.ConvTranspose3d`` with the same arguments, its kernel_size, stride,
    padding, dilation and output_padding in ``geometry``."""
    return conv_spec(3, in_channels, out_channels, geometry, groups, bias, transposed=True)


def conv3d_kk1_spec(
    in_channels: int,
    out_channels: int,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] | str = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
    bias: bool = True,
) -> ConvSpec:
    """Return the ``ConvSpec`` of a ``torch.nn.Conv3d`` whose kernel is (k, k, 1) or (kh, kw, 1).

    ``kernel_size`` as an int k means (k, k, 1); a 3-tuple must end in 1. Stride, padding and
    dilation apply to all three axes as in ``torch.nn.Conv3d`` (so depth padding/stride are allowed).
    """
    if _is_int(kernel_size):
        _positive_int("kernel_size", kernel_size)
        kernel_size = (int(kernel_size), int(kernel_size), 1)
    elif isinstance(kernel_size, Sequence) and not isinstance(kernel_size, str):
        if len(kernel_size) != 3 or not _is_int(kernel_size[-1]) or kernel_size[-1] != 1:
            raise ParameterError(
                f"kernel_size of conv3d_kk1_spec must be an integer k (meaning (k, k, 1)) or a tuple "
                f"(kh, kw, 1) whose last entry is 1; got {tuple(kernel_size)!r}"
            )
    else:
        raise ParameterError(
            f"kernel_size must be an integer k or a tuple (kh, kw, 1); got {kernel_size!r} "
            f"of type {type(kernel_size).__name__}"
        )
    return conv_spec(3, in_channels, out_channels, ConvGeometry(kernel_size, stride, padding, dilation), groups, bias)
