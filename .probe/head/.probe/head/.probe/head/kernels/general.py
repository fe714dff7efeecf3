"""The kernels that take every conv of their op: conv_direct.cu and conv_mma.cu (one thread, or one warp's
tile, per output: simple and slow) and the im2col tiled kernels conv_tiled.cu, conv_mma_tiled.cu and
conv_dmma_tiled.cu (conv_tile.cuh); their launches on a ``ConvCall`` that ``fpa_kernels.launch`` checked."""

from __future__ import annotations

import functools
import math
import pathlib

import torch

from fp_analysis.errors import ShapeError
from fp_analysis.ops.conv import ConvSpec

from .call import ConvCall
from .driver import device_pointer, load_kernel
from .geometry import TILE_BK, TILE_BM, TILE_BN
from .params import padded3, padded_input_shape
from .variants import TensorCore, VariantSpec

__all__ = ["launch_direct", "launch_tiled", "term_table"]

_BLOCK = 128  # threads per block of the direct kernels (a multiple of the 32 of conv_mma.cu's warps)
_INT32_MAX = 2**31 - 1


def launch_direct(cubin: pathlib.Path, entry: str, variant: VariantSpec, call: ConvCall) -> None:
    """Launch conv_direct.cu (one thread per output) or conv_mma.cu (a warp per 16 × 8 output tile) on a checked
    call."""
    spec, x, out = call.spec, call.x, call.out
    kernel = load_kernel(cubin, entry, x.device.index)
    if variant.tensor_core is TensorCore.NONE:
        threads = out.numel()
    else:
        og = spec.out_channels // spec.groups
        pixels = out.shape[0] * out.shape[2] * out.shape[3]
        threads = 32 * ((pixels + 15) // 16) * ((og + 7) // 8) * spec.groups
    grid = (threads + _BLOCK - 1) // _BLOCK
    if grid >= 2**31:
        raise ShapeError(f"the output is too large for one launch ({threads} threads)")
    args = [*map(device_pointer, (x, call.weight, call.bias, call.multiplier, out)), call.params()]
    kernel.launch(grid, _BLOCK, args, call.stream)


def term_table(spec: ConvSpec, padded_shape: tuple[int, ...]) -> torch.Tensor:
    """The tiled kernels' table of a group's K terms, channel outermost (conv_tile.cuh): int32 offsets of
    each term's input from the output pixel's corner in the zero-padded input, 0 past K up to a multiple
    of the chunk (``geometry.TILE_BK``).

    Raises ShapeError where the kernels' 32-bit offsets do not reach, or when the kernel's third extent
    is not 1 (conv2d and conv3d (k, k, 1) are what the tiled kernels take).
    """
    d = padded3(padded_shape[2:], 1)
    k = padded3(spec.kernel_size, 1)
    dil = padded3(spec.dilation, 1)
    cg = spec.in_channels // spec.groups
    if k[2] != 1:
        raise ShapeError(f"the tiled kernels take kernels (kh, kw) or (kh, kw, 1); got kernel_size={spec.kernel_size}")
    if cg * d[0] * d[1] * d[2] > _INT32_MAX:
        raise ShapeError(
            f"the tiled kernels address one group of one (padded) image with 32-bit offsets; got {cg} channels × "
            f"{d[0] * d[1] * d[2]} elements = {cg * d[0] * d[1] * d[2]} > {_INT32_MAX}: use a direct variant"
        )
    c, i0, i1 = (a.reshape(-1) for a in torch.meshgrid(*(torch.arange(n) for n in (cg, k[0], k[1])), indexing="ij"))
    offsets = c * (d[0] * d[1] * d[2]) + i0 * dil[0] * (d[1] * d[2]) + i1 * dil[1] * d[2]
    padded = -(-offsets.numel() // TILE_BK) * TILE_BK
    return torch.nn.functional.pad(offsets, (0, padded - offsets.numel())).to(torch.int32).contiguous()


def launch_tiled(cubin: pathlib.Path, entry: str, call: ConvCall) -> None:
    """Launch the tiled kernel ``entry`` (conv_tiled, conv_mma_tiled or conv_dmma_tiled) of ``cubin`` on a
    checked call.

    The input goes in zero-padded (a copy, when the conv pads), the weights as [group][K][channel] (a
    copy, so each tile row of B is contiguous), with the term table beside them; the copies are made on
    ``x``'s device on the current stream, which orders their release after the kernel.
    """
    spec, x, weight, out = call.spec, call.x, call.weight, call.out
    device = x.device
    og, groups = spec.out_channels // spec.groups, spec.groups
    K = weight[0].numel()
    pixels = out.shape[0] * math.prod(out.shape[2:])
    grid = ((pixels + TILE_BM - 1) // TILE_BM, groups * ((og + TILE_BN - 1) // TILE_BN))
    if grid[0] > _INT32_MAX or grid[1] > 65535:
        raise ShapeError(f"the output is too large for one tiled launch (grid {grid}; limits 2^31−1 × 65535)")
    padded_shape = padded_input_shape(spec, tuple(x.shape))
    table = _cached_table(spec, padded_shape, device)
    w_t = weight.reshape(groups, og, K).transpose(1, 2).contiguous()
    kernel = load_kernel(cubin, entry, device.index)
    params = call.params()
    if padded_shape != tuple(x.shape):
        # The kernels read the zero-padded input and need no bounds checks (conv_tile.cuh).
        pads = [p for before, after in reversed(spec.padding) for p in (before, after)]
        x = torch.nn.functional.pad(x, pads)
        params.d0, params.d1, params.d2 = padded3(padded_shape[2:], 1)
        params.p0 = params.p1 = params.p2 = 0
    args = [*map(device_pointer, (x, w_t, call.bias, call.multiplier, out, table)), params]
    shared = table.shape[0] * 4  # the table lives in dynamic shared memory
    if kernel.static_shared + shared > kernel.max_shared:
        raise ShapeError(
            f"the tiled kernels keep the {table.shape[0]} terms' table in shared memory: {shared} bytes + "
            f"{kernel.static_shared} of tiles exceed this GPU's {kernel.max_shared} per block; use a direct variant"
        )
    # The tiled kernels declare their block size in __launch_bounds__; the driver reports it.
    kernel.launch(grid, kernel.max_threads, args, call.stream, shared)


@functools.lru_cache(maxsize=64)
def _cached_table(spec: ConvSpec, padded_shape: tuple[int, ...], device: torch.device) -> torch.Tensor:
    """The term table on ``device``, made once per conv and input shape (it is read-only)."""
    return term_table(spec, padded_shape).to(device)
