"""The row-tile CUDA-core kernel (conv_rows.cu): which tiled variants and convs it takes, and its launch.

It computes what conv_tiled.cu computes, bit for bit (the same fmaf chain in the same term order), on 2-d
convs with stride 1 along W (and 3-d (k, k, 1) convs through their 2-d view, ``rows_view``), loading each
staged input once per (channel, kh) for all KW taps instead of gathering every term. ``run_variant`` sends a
tiled CUDA-core variant here (``fpa_kernels.registry``) whenever ``rows_unsupported`` finds nothing in the
way: on an H200 it was faster than conv_tiled.cu on every preset and variant it takes (bench_h200.json,
PERF_NOTES.md). The GPU validation runs both on every conv.
"""

from __future__ import annotations

import ctypes
import math
import pathlib
from dataclasses import replace

import torch.nn.functional as F

from fp_analysis.errors import ParameterError, ShapeError
from fp_analysis.numerics.orders import Order
from fp_analysis.ops.conv import ConvSpec

from .call import ConvCall
from .driver import device_pointer, load_kernel
from .geometry import ROWS_BN, ROWS_MAX_REACH
from .variants import Schedule, TensorCore, VariantSpec

__all__ = ["launch_rows", "row_units", "rows_defines", "rows_unsupported", "rows_view"]

_TPX, _GROUPS = 16, 16  # the thread tile rows_defines gives: pixels per thread, pixel groups per block
# Below this many terms per output a conv is bound by writing its output: 8 pixels per thread (3 blocks per SM),
# more warps to overlap one block's stores with another's arithmetic. conv3d_kk1's preset (K = 27) on an H200:
# 1.82 ms against 1.90 with 16 (experiments/tile_probe.py --preset conv3d_kk1, PERF_NOTES.md); the seed (K = 1440)
# ran 9.12 ms with 8 against 8.74 with 16.
_SMALL_K, _TPX_SMALL_K = 128, 8
_BN, _MAX_REACH = ROWS_BN, ROWS_MAX_REACH
_SM_SHARED = 228 * 1024  # shared memory per SM on compute capability 9.0; ~1 KB of it per block is reserved
_MIN_BLOCKS = {8: 3, 16: 2}  # blocks per SM the register cap aims at: 168 / 255 registers per thread
_MAX_CHANNEL_BYTES = 96 * 1024  # one channel's stage; 2 of them must fit the 227 KB a block may have


def _window(spec: ConvSpec, tpx: int = _TPX) -> tuple[int, int, int]:
    """(KW, DW, window floats rounded up to 16 bytes) of a 2-d spec; DW is 1 for a 1-wide kernel."""
    kw = spec.kernel_size[1]
    dw = spec.dilation[1] if kw > 1 else 1
    return kw, dw, -(-(tpx + (kw - 1) * dw) // 4) * 4


def _slab(spec: ConvSpec, tpx: int, groups: int) -> int:
    """Floats per staged input row: the block's groups·tpx pixels and, for each of the (at most two) output
    rows they lie in, the reach of that row's last window beyond them."""
    return groups * tpx + 2 * (_window(spec, tpx)[2] - tpx)


def row_units(out_width: int, tpx: int = _TPX, groups: int = _GROUPS) -> int:
    """Pixel groups to an output row in conv_rows.cu's numbering of its blocks' groups: ceil(out_width / tpx),
    so that a block's groups run on into the next row and only a row's last group computes pixels past its
    end; for rows narrower than a block, ``groups`` (one block per row, the groups past the row idle)."""
    if out_width < 1 or tpx < 1 or groups < 1:
        raise ParameterError(f"out_width, tpx and groups must be ≥ 1, got {out_width}, {tpx}, {groups}")
    return max(-(-out_width // tpx), groups)


def _channel_bytes(spec: ConvSpec, tpx: int = _TPX, groups: int = _GROUPS) -> int:
    """Shared memory one input channel takes in a stage: KH slab rows and KH·KW weight rows."""
    kh, kw = spec.kernel_size
    return 4 * (kh * _slab(spec, tpx, groups) + kh * kw * _BN)


def rows_view(spec: ConvSpec, input_shape: tuple[int, ...] | None) -> ConvSpec | str:
    """The 2-d conv conv_rows.cu computes ``spec`` as, or why there is none.

    A 2-d spec is itself. A 3-d (k, k, 1) spec with stride 1 and no padding along W and D is, on an input of
    depth D viewed as (N, C, H, W·D), the 2-d conv with dilation (l0, l1·D) and W padding multiplied by D:
    output (h, w, d) sits at w·D + d of the view and its tap kw at (w + kw·l1)·D + d, so every output has
    the same terms in the same order (channel, kh, kw) as the 3-d conv. It needs the input's shape (D).
    """
    if spec.spatial_dims == 2:
        return spec
    if input_shape is None or len(input_shape) != 5:
        return "it takes a 3-d conv only with the input's (N, C, H, W, D) shape, to view it as 2-d"
    if spec.stride[1:] != (1, 1) or spec.padding[2] != (0, 0):
        return (
            f"a 3-d conv needs stride 1 along W and D and no padding along D, got stride={spec.stride}, "
            f"padding={spec.padding}"
        )
    depth = input_shape[4]
    (top, bottom), (left, right), _ = spec.padding
    return ConvSpec(
        spec.in_channels,
        spec.out_channels,
        spec.kernel_size[:2],
        (spec.stride[0], 1),
        ((top, bottom), (left * depth, right * depth)),
        (spec.dilation[0], spec.dilation[1] * depth),
        spec.groups,
        spec.bias,
    )


def rows_unsupported(variant: VariantSpec, spec: ConvSpec, input_shape: tuple[int, ...] | None = None) -> str | None:
    """Why conv_rows.cu cannot run ``variant`` of ``spec`` (on an input of ``input_shape``, which a 3-d
    spec needs: ``rows_view``), or None when it can."""
    if variant.tensor_core is not TensorCore.NONE or variant.accumulation.order is not Order.SEQUENTIAL:
        return "it implements the sequential order on the CUDA cores only"
    if variant.schedule is not Schedule.TILED:
        return "it runs tiled variants"
    view = rows_view(spec, input_shape)
    if isinstance(view, str):
        return view
    if view.stride[1] != 1:
        return f"it needs stride 1 along W, got stride={spec.stride}"
    kw, dw, _ = _window(view)
    if (kw - 1) * dw > _MAX_REACH:
        what = "(kernel_size[1] - 1) * dilation[1]" + (" * D" if spec.spatial_dims == 3 else "")
        return f"{what} exceeds the {_MAX_REACH} inputs its register window reaches"
    if _channel_bytes(view) > _MAX_CHANNEL_BYTES:
        return "one input channel's rows and weights exceed half a block's shared memory"
    return None


def rows_defines(variant: VariantSpec, spec: ConvSpec, input_shape: tuple[int, ...] | None = None) -> dict[str, int]:
    """The build's defines: the variant's arithmetic, the compile-time KW and DW of the window (of
    ``rows_view``: a 3-d spec needs ``input_shape``), and the thread tile (pixels × channels per thread,
    pixel groups per block, step interleaving, blocks per SM)."""
    view = rows_view(spec, input_shape)
    if isinstance(view, str):
        raise ParameterError(f"conv_rows cannot run this conv: {view}")
    kw, dw, _ = _window(view)
    tpx = _TPX_SMALL_K if view.K < _SMALL_K else _TPX
    rows = {
        "FPA_ROWS_KW": kw,
        "FPA_ROWS_DW": dw,
        "FPA_ROWS_TPX": tpx,
        "FPA_ROWS_TOC": 8,
        "FPA_ROWS_GROUPS": _GROUPS,
        # Steps in blocks of 4 pixels: on the seed (H200, experiments/tile_probe.py, PERF_NOTES.md) 7.22 ms
        # against 7.22 in pairs and 7.38 in eights; before the copies got cheaper 8.46 against 8.72 pixel
        # by pixel, 8.56 in pairs, 8.58 in eights and 9.09 channel by channel.
        "FPA_ROWS_IB": 4,
        "FPA_ROWS_MIN_BLOCKS": _MIN_BLOCKS[tpx],
    }
    return {**variant.defines(), **rows}


def launch_rows(cubin: pathlib.Path, defines: dict[str, int], call: ConvCall) -> None:
    """Launch conv_rows.cu, built with ``defines`` into ``cubin``, on a checked call (``rows_unsupported`` must
    have returned None).

    The kernel reads the input where it is when its rows and its padding along W are multiples of 4 floats
    (the seed's are), else a zero-padded copy; the weights as [group][K][channel], as for conv_tiled.cu.
    Copies are made on the current stream, which orders their release after the kernel. ``defines`` are
    ``rows_defines``' or alternatives to them (experiments/tile_probe.py); FPA_ROWS_TPX, FPA_ROWS_GROUPS and
    FPA_ROWS_MIN_BLOCKS also set the launch geometry here.
    """
    spec, x, weight, out = call.spec, call.x, call.weight, call.out
    if spec.spatial_dims == 3:  # the (N, C, H, W·D) view (rows_view); the tensors are contiguous
        n, c, h, w, d = x.shape
        o_shape = out.shape
        view = replace(
            call,
            spec=rows_view(spec, tuple(x.shape)),
            x=x.view(n, c, h, w * d),
            weight=weight.view(*weight.shape[:4]),
            out=out.view(*o_shape[:3], o_shape[3] * o_shape[4]),
        )
        return launch_rows(cubin, defines, view)
    n, c, h, w = x.shape
    (top, bottom), (left, _) = spec.padding
    og, groups = spec.out_channels // spec.groups, spec.groups
    cg, K = c // groups, weight[0].numel()
    tpx, px_groups = defines["FPA_ROWS_TPX"], defines["FPA_ROWS_GROUPS"]
    e0, e1 = out.shape[2:]
    units_per_row = row_units(e1, tpx, px_groups)
    params = call.params()
    if w % 4 or left % 4:  # 16-byte pieces would straddle the input's edges: read a zero-padded copy
        pitch = -(-(w + left) // 4) * 4
        x = F.pad(x, (left, pitch - w - left, top, bottom))
        params.d0, params.d1 = h + top + bottom, pitch
        params.p0 = params.p1 = 0
    w_t = weight.reshape(groups, og, K).transpose(1, 2).contiguous()
    channel_bytes = _channel_bytes(spec, tpx, px_groups)
    # As many channels per stage as the two stages of each of the SM's blocks leave room for.
    block_bytes = _SM_SHARED // defines["FPA_ROWS_MIN_BLOCKS"] - 1024
    per_stage = max(1, min(cg, block_bytes // (2 * channel_bytes)))
    grid = (-(-n * e0 * units_per_row // px_groups), groups * math.ceil(og / _BN))
    if grid[0] > 2**31 - 1 or grid[1] > 65535:
        raise ShapeError(f"the output is too large for one conv_rows launch (grid {grid}; limits 2^31−1 × 65535)")
    kernel = load_kernel(cubin, "conv_rows", x.device.index)
    args = [*map(device_pointer, (x, w_t, call.bias, call.multiplier, out)), params, ctypes.c_int(per_stage)]
    args += [ctypes.c_int(units_per_row)]
    kernel.launch(grid, kernel.max_threads, args, call.stream, 2 * per_stage * channel_bytes)
