"""An ATen op as the interposer runs it: as given, except an fp64 convolution on a CPU whose im2col columns would be
large, which is computed in pieces (``run_op``).

PyTorch's slow_conv2d/3d lowers float64 to im2col + GEMM: C_in·prod(kernel) × prod(output) values per batch item, 2.9
GB for one seed-000 image; the pieces are batch items and, where the conv has one group and is not transposed, blocks
of input channels summed in fp64 (the same products, added in another fp64 order: 1e-16 relative).
"""

from __future__ import annotations

import math

import torch

__all__ = ["CONV64_BYTES", "run_op"]

aten = torch.ops.aten

# The most an fp64 convolution on a CPU may allocate for its columns (PyTorch's slow_conv2d/3d lowers float64
# to im2col + GEMM: C_in·prod(kernel) × prod(output) values per batch item, 2.9 GB for one seed-000 image).
CONV64_BYTES = 256 << 20


def run_op(func, args, kwargs):
    """``func(*args, **kwargs)``; an fp64 convolution on a CPU whose columns would pass ``CONV64_BYTES`` is
    computed batch item by batch item and, where it has one group and is not transposed, over blocks of
    input channels summed in fp64 (the same products, added in another fp64 order: 1e-16 relative)."""
    if func is not aten.convolution.default:
        return func(*args, **kwargs)
    x, weight, bias, stride, padding, dilation, transposed, output_padding, groups = args
    if x.device.type != "cpu" or x.dtype != torch.float64 or x.dim() < 3:
        return func(*args, **kwargs)
    out_shape = _conv_output_shape(x, weight, stride, padding, dilation, transposed, output_padding, groups)
    columns = weight.shape[1] * math.prod(weight.shape[2:]) * math.prod(out_shape[2:]) * 8
    if transposed:
        columns = weight.shape[1] * math.prod(weight.shape[2:]) * math.prod(x.shape[2:]) * 8
    if columns <= CONV64_BYTES:
        return func(*args, **kwargs)
    split = not transposed and groups == 1
    block = max(1, int(CONV64_BYTES // max(1, columns // weight.shape[1]))) if split else weight.shape[1]
    out = torch.empty(out_shape, dtype=torch.float64)
    rest = (stride, padding, dilation, transposed, output_padding, groups)
    for n in range(x.shape[0]):
        total = None
        for c0 in range(0, x.shape[1] if split else 1, block if split else 1):
            xs = x[n : n + 1, c0 : c0 + block] if split else x[n : n + 1]
            ws = weight[:, c0 : c0 + block] if split else weight
            part = func(xs, ws, None, *rest)
            total = part if total is None else total + part
        if bias is not None:
            total = total + bias.reshape(1, -1, *([1] * (x.dim() - 2)))
        out[n : n + 1] = total
    return out


def _conv_output_shape(x, weight, stride, padding, dilation, transposed, output_padding, groups) -> tuple[int, ...]:
    """The output shape of aten.convolution (the formulas of ``fp_analysis.ops.conv.ConvSpec.output_shape``);
    a stride, padding, dilation or output_padding of one value applies to every spatial dim, as ATen expands it."""
    stride, padding, dilation, output_padding = (
        [v[0]] * (x.dim() - 2) if len(v) == 1 else v for v in (stride, padding, dilation, output_padding)
    )
    spatial = []
    for d, size in enumerate(x.shape[2:]):
        k = weight.shape[2 + d]
        if transposed:
            spatial.append((size - 1) * stride[d] - 2 * padding[d] + dilation[d] * (k - 1) + output_padding[d] + 1)
        else:
            spatial.append((size + 2 * padding[d] - dilation[d] * (k - 1) - 1) // stride[d] + 1)
    channels = weight.shape[1] * groups if transposed else weight.shape[0]
    return (x.shape[0], channels, *spatial)
