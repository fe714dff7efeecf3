"""The kernels' parameter block (``struct ConvParams`` of conv_params.cuh) and the zero-padded input shape
the tiled launchers work on."""

from __future__ import annotations

import ctypes

from fp_analysis.ops.conv import ConvSpec

__all__ = ["ConvParams", "conv_params", "padded3", "padded_input_shape"]


class ConvParams(ctypes.Structure):
    """Mirror of ``struct ConvParams`` in kernels/conv_params.cuh (same order, same C types)."""

    _fields_ = (
        [(n, ctypes.c_longlong) for n in ("n", "c", "d0", "d1", "d2", "o", "e0", "e1", "e2")]
        + [
            (n, ctypes.c_int)
            for n in ("k0", "k1", "k2", "s0", "s1", "s2", "p0", "p1", "p2", "l0", "l1", "l2", "groups", "has_bias")
        ]
        + [("negative_slope", ctypes.c_float)]
    )


def padded3(values: tuple, fill: int) -> list[int]:
    """``values`` extended with ``fill`` to three extents (a 1-d or 2-d conv is the 3-d code with extents of 1)."""
    return list(values) + [fill] * (3 - len(values))


def conv_params(spec: ConvSpec, input_shape: tuple[int, ...], negative_slope: float = 0.01) -> ConvParams:
    """The kernel's parameter block for ``spec`` on an input of ``input_shape`` (2-d: a trailing extent 1)."""
    out = spec.output_shape(input_shape)
    d = padded3(input_shape[2:], 1)
    e = padded3(out[2:], 1)
    return ConvParams(
        input_shape[0],
        input_shape[1],
        *d,
        out[1],
        *e,
        *padded3(spec.kernel_size, 1),
        *padded3(spec.stride, 1),
        *padded3(tuple(before for before, _ in spec.padding), 0),
        *padded3(spec.dilation, 1),
        spec.groups,
        int(spec.bias),
        ctypes.c_float(negative_slope).value,
    )


def padded_input_shape(spec: ConvSpec, input_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The input's shape after the zero padding the tiled kernels' launcher applies (before + after)."""
    spatial = [d + before + after for d, (before, after) in zip(input_shape[2:], spec.padding, strict=True)]
    return (*input_shape[:2], *spatial)
