"""The warpgroup tensor-core kernel (conv_wgmma.cu, sm_90a): which TF32 / 3xTF32 convs it takes, and its
launch with the two prep kernels that split and lay out the input and the weights.

``run_variant`` sends a tiled tensor-core variant here (``fpa_kernels.registry``) when ``wgmma_unsupported``
finds nothing in the way; other convs (strided along W, grouped, 3-d) stay on conv_mma_tiled.cu. The two kernels differ
in where the fp32 additions happen (conv_wgmma.cu's file comment), not in the bound they answer to.
"""

from __future__ import annotations

import ctypes
import pathlib

import torch

from fp_analysis.ops.conv import ConvSpec

from .call import ConvCall
from .driver import device_pointer, load_kernel
from .geometry import WG_BN, WG_PX, WG_STAGES
from .params import conv_params
from .variants import Schedule, TensorCore, VariantSpec

__all__ = ["launch_wgmma", "wgmma_defines", "wgmma_unsupported"]

_PX, _BN, (_A_STAGES, _B_STAGES) = WG_PX, WG_BN, WG_STAGES
_MAX_SHARED = 227 * 1024 - 128  # a block's opt-in limit on compute capability 9.0, less the mbarriers
_PREP_BLOCK = 256


def _planes(variant: VariantSpec) -> int:
    return 2 if variant.tensor_core is TensorCore.TF32X3 else 1


def _shared_bytes(variant: VariantSpec, spec: ConvSpec, ck: int) -> int:
    """conv_wgmma.cu's dynamic shared memory: A_STAGES slabs and B_STAGES taps of ``ck`` channels."""
    slabw = _PX + (spec.kernel_size[1] - 1) * spec.dilation[1]
    return _planes(variant) * (ck // 4) * 16 * (_A_STAGES * slabw + _B_STAGES * _BN)


def _channels_per_step(variant: VariantSpec, spec: ConvSpec) -> int | None:
    """The K step CK (32, 16 or 8 input channels): the widest whose stages fit, never wider than the
    channels rounded up to 8 (zero channels cost time but add exact zeros)."""
    widest = min(32, -(-spec.in_channels // 8) * 8)
    return next((ck for ck in (32, 16, 8) if ck <= widest and _shared_bytes(variant, spec, ck) <= _MAX_SHARED), None)


def wgmma_unsupported(variant: VariantSpec, spec: ConvSpec) -> str | None:
    """Why conv_wgmma.cu cannot run ``variant`` of ``spec``, or None when it can."""
    if variant.tensor_core is TensorCore.NONE:
        return "it is a tensor-core kernel"
    if variant.schedule is not Schedule.TILED:
        return "it runs tiled variants"
    if spec.spatial_dims != 2:
        return "it takes 2-d convolutions"
    if spec.stride[1] != 1:
        return f"it needs stride 1 along W, got stride={spec.stride}"
    if spec.groups != 1:
        return f"it takes one group, got groups={spec.groups}"
    if _channels_per_step(variant, spec) is None:
        return "the input row segment of (kernel_size[1] - 1) * dilation[1] + 256 pixels exceeds shared memory"
    if torch.cuda.is_available() and torch.cuda.get_device_capability() != (9, 0):
        return "its sm_90a code runs on compute capability 9.0 only"
    return None


def wgmma_defines(variant: VariantSpec, spec: ConvSpec) -> dict[str, int]:
    """The build's defines: the split (1 or 3) and the K step in channels."""
    return {"FPA_TC_SPLIT": variant.tensor_core.products, "FPA_WG_CK": _channels_per_step(variant, spec)}


def _launch_1d(kernel, count: int, args: list, stream: int) -> None:
    kernel.launch(-(-count // _PREP_BLOCK), _PREP_BLOCK, args, stream)


def launch_wgmma(cubin: pathlib.Path, defines: dict[str, int], variant: VariantSpec, call: ConvCall) -> None:
    """Launch conv_wgmma.cu, built with ``defines`` (``wgmma_defines``) into ``cubin``, on a checked call
    (``wgmma_unsupported`` must have returned None): the two prep kernels write the split, padded, regrouped
    copies (conv_wgmma.cu's file comment gives their layouts) on the current stream, then the conv reads them.
    It has no epilogue: ``call.multiplier`` is not read."""
    spec, x, out = call.spec, call.x, call.out
    n, c, h, _ = x.shape
    (top, bottom), _ = spec.padding
    kh, kw = spec.kernel_size
    e0, e1 = out.shape[2:]
    ck, planes = defines["FPA_WG_CK"], _planes(variant)
    device, stream = x.device.index, call.stream
    tiles, chunks, n_tiles = -(-e1 // _PX), -(-c // ck), -(-spec.out_channels // _BN)
    hp, wp, gp = h + top + bottom, tiles * _PX + (kw - 1) * spec.dilation[1], chunks * ck // 4
    params = conv_params(spec, call.input_shape)  # the default negative_slope: no epilogue

    xs = torch.empty(n * hp * planes * gp * wp * 4, dtype=torch.float32, device=x.device)
    prep = [device_pointer(x), device_pointer(xs), params, ctypes.c_longlong(hp), ctypes.c_longlong(wp)]
    _launch_1d(load_kernel(cubin, "conv_wgmma_input", device), n * hp * gp * wp, [*prep, ctypes.c_int(gp)], stream)
    ws = torch.empty(n_tiles * chunks * kh * kw * planes * ck * _BN, dtype=torch.float32, device=x.device)
    _launch_1d(
        load_kernel(cubin, "conv_wgmma_weight", device),
        ws.numel(),
        [device_pointer(call.weight), device_pointer(ws), params, ctypes.c_int(n_tiles)],
        stream,
    )

    params.d0, params.d1 = hp, wp  # the conv reads the padded copy
    params.p0 = params.p1 = 0
    kernel = load_kernel(cubin, "conv_wgmma", device)
    grid = (n * e0 * tiles, n_tiles)
    args = [*map(device_pointer, (xs, ws, call.bias, out)), params]
    kernel.launch(grid, kernel.max_threads, args, stream, _shared_bytes(variant, spec, ck))
