"""PyTorch reference modules for the seed ops, built from a ``ConvSpec`` (and ``EpilogueSpec``).

The modules are what KernelBench evaluates kernels against: ``torch.nn.Conv2d`` / ``Conv3d`` with
PyTorch's default initialisation, and for the conv_gelu op the ``Model`` of KernelBench level 2
problem 54 (``54_Conv2d_Multiply_LeakyReLU_GELU.py``), reproduced here as ``ConvMultLeakyGelu``
with the same order of random draws (conv init, then ``torch.randn(multiplier_shape)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from ..errors import ParameterError
from .conv import ConvSpec
from .epilogue import EpilogueSpec

__all__ = ["ConvMultLeakyGelu", "reference_module", "torch_padding_arg"]


def torch_padding_arg(spec: ConvSpec) -> tuple[int, ...] | str:
    """Return the ``padding`` argument that makes ``torch.nn.Conv*d`` pad as ``spec`` does.

    Symmetric padding is passed as a tuple of ints. Asymmetric padding is only expressible in torch
    as ``'same'`` (stride 1, total dilation·(k−1) split total//2 before, rest after); any other
    asymmetric padding has no ``torch.nn.Conv*d`` equivalent and is refused.
    """
    if spec.is_symmetric_padding:
        return tuple(before for before, _ in spec.padding)
    if spec.padding == spec.same_padding():
        return "same"
    raise ParameterError(
        f"padding={spec.padding} is asymmetric and is not what padding='same' gives for this spec, so "
        "torch.nn.Conv2d/Conv3d cannot express it; pad the input explicitly (F.pad) instead"
    )


def _conv_module(spec: ConvSpec) -> nn.Module:
    cls = nn.Conv2d if spec.spatial_dims == 2 else nn.Conv3d
    return cls(
        spec.in_channels,
        spec.out_channels,
        spec.kernel_size,
        stride=spec.stride,
        padding=torch_padding_arg(spec),
        dilation=spec.dilation,
        groups=spec.groups,
        bias=spec.bias,
    )


class ConvMultLeakyGelu(nn.Module):
    """conv → · multiplier → LeakyReLU → GELU: KernelBench level 2 problem 54's ``Model``.

    ``forward`` runs the same ops in the same order as KernelBench (``x = self.conv(x);
    x = x * self.multiplier; x = self.leaky_relu(x); x = gelu(x)``); ``approximate`` selects the GELU
    form (Hendrycks & Gimpel 2016), 'none' in KernelBench.
    """

    def __init__(self, spec: ConvSpec, multiplier_shape: Sequence[int], epilogue: EpilogueSpec) -> None:
        super().__init__()
        self.conv = _conv_module(spec)
        # Drawn after the conv's init, as in KernelBench, so seeds give the same parameters.
        self.multiplier = nn.Parameter(torch.randn(tuple(multiplier_shape)))
        self.leaky_relu = nn.LeakyReLU(negative_slope=epilogue.negative_slope)
        self.gelu = nn.GELU(approximate=epilogue.approximate.value)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = x * self.multiplier
        x = self.leaky_relu(x)
        return self.gelu(x)


def _validated_multiplier_shape(spec: ConvSpec, multiplier_shape: Any) -> tuple[int, ...]:
    expected = (spec.out_channels,) + (1,) * spec.spatial_dims
    if multiplier_shape is None:
        raise ParameterError(f"multiplier_shape is required with an epilogue; KernelBench uses {expected}")
    try:
        shape = tuple(int(s) for s in multiplier_shape)
    except (TypeError, ValueError):
        raise ParameterError(
            f"multiplier_shape must be a tuple of ints like {expected}, got {multiplier_shape!r}"
        ) from None
    # A per-output-channel multiplier is the op's definition; anything else would broadcast
    # differently (or not at all) against the (N, C_out, *spatial) conv output.
    if shape != expected:
        raise ParameterError(f"multiplier_shape must be {expected} (one multiplier per output channel), got {shape}")
    return shape


def reference_module(
    spec: ConvSpec, epilogue: EpilogueSpec | None = None, multiplier_shape: Sequence[int] | None = None
) -> nn.Module:
    """Return the PyTorch module computing ``spec`` (and ``epilogue``), freshly initialised.

    Without ``epilogue`` it is ``torch.nn.Conv2d`` / ``Conv3d`` (``multiplier_shape`` must then be
    None); with one, ``ConvMultLeakyGelu`` with a multiplier of ``multiplier_shape`` =
    (out_channels, 1, …, 1). Initialisation draws from torch's global RNG, as KernelBench does.
    """
    if not isinstance(spec, ConvSpec):
        raise ParameterError(f"spec must be a ConvSpec, got {type(spec).__name__}")
    if epilogue is None:
        if multiplier_shape is not None:
            raise ParameterError("multiplier_shape was given without an epilogue; pass epilogue=EpilogueSpec(...)")
        return _conv_module(spec)
    if not isinstance(epilogue, EpilogueSpec):
        raise ParameterError(f"epilogue must be an EpilogueSpec or None, got {type(epilogue).__name__}")
    return ConvMultLeakyGelu(spec, _validated_multiplier_shape(spec, multiplier_shape), epilogue)
