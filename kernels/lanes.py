"""The lane-strided CUDA-core kernel (conv_lanes.cu) for convs with few terms per output: which variants and convs
it takes, its build's defines, and its launch.

A conv of K ≤ ``LANES_MAX_K`` terms per output does little arithmetic per byte it writes (conv3d (3, 3, 1): 27 fmaf
per 4-byte output), and conv_rows.cu's thread tile, made for long rows of terms, holds 168 registers and stores
8 channels' 16-byte pieces 64 bytes apart. conv_lanes.cu's persistent blocks stage their weights once and each unit's
whole input at once, give each lane of a warp pixels 32 apart (a warp's store: one 128-byte line) and hold 32
accumulators a thread. Same terms,
same order, so the same bits as conv_rows.cu, conv_tiled.cu and the CPU twin. It is not yet the chosen kernel for any
conv (the registry lists it after conv_rows): it becomes so where it is faster on the device (PERF_NOTES.md).
"""

from __future__ import annotations

import ctypes
import math
import pathlib

import torch

from fp_analysis.errors import ParameterError, ShapeError
from fp_analysis.ops.conv import ConvSpec

from .call import ConvCall
from .driver import device_pointer, load_kernel
from .geometry import ROWS_BN
from .params import conv_params
from .rows import rows_unsupported, rows_view
from .variants import VariantSpec

__all__ = ["LANES_MAX_K", "lanes_defines", "lanes_unsupported", "launch_lanes"]

# Terms per output up to which a block stages all of them at once (its input rows, K × 64 weights); the source's
# tables of rows are this long (FPA_LANES_MAX_K).
LANES_MAX_K = 32
_TPX, _TOC, _MIN_BLOCKS = 4, 8, 4  # pixels (32 apart) and channels per thread; blocks per SM (a 64-register cap)


def _shared_bytes(view: ConvSpec, tpx: int = _TPX) -> int:
    """A block's dynamic shared memory: cg·KH input rows of 32·tpx + (KW − 1)·DW floats (rounded up to 4: the
    weights' float4 loads), and K × 64 weights."""
    kh, kw = view.kernel_size
    dw = view.dilation[1] if kw > 1 else 1
    slab = -(-(32 * tpx + (kw - 1) * dw) // 4) * 4
    return 4 * (view.in_channels // view.groups * kh * slab + view.K * ROWS_BN)


def lanes_unsupported(variant: VariantSpec, spec: ConvSpec, input_shape: tuple[int, ...] | None = None) -> str | None:
    """Why conv_lanes.cu cannot run ``variant`` of ``spec`` (a 3-d spec needs ``input_shape``: ``rows_view``), or
    None when it can: it takes what conv_rows.cu takes (the same view, order and arithmetic) with K ≤ 32."""
    why = rows_unsupported(variant, spec, input_shape)
    if why is not None:
        return why
    view = rows_view(spec, input_shape)
    if view.K > LANES_MAX_K:
        return f"it stages every term at once: K ≤ {LANES_MAX_K} terms per output, got {view.K}"
    return None  # K ≤ 32 and conv_rows's reach (40): a block's rows and weights take at most 24 KiB (KW = 1)


def lanes_defines(variant: VariantSpec, spec: ConvSpec, input_shape: tuple[int, ...] | None = None) -> dict[str, int]:
    """The build's defines: the variant's arithmetic, the compile-time KW and DW of ``rows_view`` (a 3-d spec needs
    ``input_shape``), and the thread tile (pixels × channels per thread, blocks per SM)."""
    view = rows_view(spec, input_shape)
    if isinstance(view, str):
        raise ParameterError(f"conv_lanes cannot run this conv: {view}")
    kw = view.kernel_size[1]
    lanes = {
        "FPA_LANES_KW": kw,
        "FPA_LANES_DW": view.dilation[1] if kw > 1 else 1,
        "FPA_LANES_TPX": _TPX,
        "FPA_LANES_TOC": _TOC,
        "FPA_LANES_MIN_BLOCKS": _MIN_BLOCKS,
        "FPA_LANES_MAX_K": LANES_MAX_K,
    }
    return {**variant.defines(), **lanes}


def launch_lanes(cubin: pathlib.Path, defines: dict[str, int], call: ConvCall) -> None:
    """Launch conv_lanes.cu, built with ``defines`` into ``cubin``, on a checked call (``lanes_unsupported`` must
    have returned None): the input read where it is (any width and padding; a 3-d conv's as its 2-d view, the same
    memory), the weights as [group][K][channel], as for conv_tiled.cu. FPA_LANES_TPX, FPA_LANES_TOC and
    FPA_LANES_MIN_BLOCKS also set the launch geometry here."""
    spec, x = call.spec, call.x
    view_shape = (*x.shape[:3], x.shape[3] * x.shape[4]) if spec.spatial_dims == 3 else tuple(x.shape)
    view = rows_view(spec, tuple(x.shape))
    e0, e1 = view.output_shape(view_shape)[2:]
    og, groups = spec.out_channels // spec.groups, spec.groups
    tpx = defines["FPA_LANES_TPX"]
    units_per_row = -(-e1 // (32 * tpx))
    units = x.shape[0] * e0 * units_per_row
    # persistent blocks, one wave: as many as the SMs hold at the register cap's blocks each
    sms = torch.cuda.get_device_properties(x.device).multi_processor_count
    grid = (min(units, sms * defines["FPA_LANES_MIN_BLOCKS"]), groups * math.ceil(og / ROWS_BN))
    # the kernel's ints: its unit counter steps past units by up to grid.x, a row's pixels past E1 by up to PX
    if units + grid[0] > 2**31 - 1 or e1 + 32 * tpx > 2**31 - 1 or grid[1] > 65535:
        raise ShapeError(
            f"the output is too large for one conv_lanes launch ({units} pieces of {e1}-pixel rows: at most 2^31−1 "
            f"with a block's steps; {grid[1]} groups × 64-channel tiles, at most 65535)"
        )
    if view.K > defines["FPA_LANES_MAX_K"]:  # its tables of rows (lanes_unsupported refuses such convs)
        raise ParameterError(f"conv_lanes takes K ≤ {defines['FPA_LANES_MAX_K']} terms per output, got {view.K}")
    w_t = call.weight.reshape(groups, og, view.K).transpose(1, 2).contiguous()
    kernel = load_kernel(cubin, "conv_lanes", x.device.index)
    args = [*map(device_pointer, (x, w_t, call.bias, call.multiplier, call.out))]
    args += [conv_params(view, view_shape, call.negative_slope), ctypes.c_int(units_per_row), ctypes.c_int(units)]
    threads = 32 * (ROWS_BN // defines["FPA_LANES_TOC"])
    kernel.launch(grid, threads, args, call.stream, _shared_bytes(view, tpx))
