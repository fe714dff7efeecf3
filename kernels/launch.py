"""Run a kernel variant on torch CUDA tensors: validate everything first, then build, load and launch."""

from __future__ import annotations

import ctypes
import functools
import math
import pathlib

import torch

from fp_analysis.errors import DtypeError, ParameterError, ShapeError
from fp_analysis.ops.conv import ConvSpec

from .build import build
from .driver import load_kernel
from .variants import Op, Schedule, TensorCore, VariantSpec

__all__ = ["ConvParams", "conv_params", "launch_tiled", "padded_input_shape", "run_variant", "term_table"]

_BLOCK = 128
_TILE_M, _TILE_N, _CHUNK = 128, 64, 16  # conv_tile.cuh: BM, BN, BK
_INT32_MAX = 2**31 - 1


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


def _padded3(values: tuple, fill: int) -> list[int]:
    return list(values) + [fill] * (3 - len(values))


def conv_params(spec: ConvSpec, input_shape: tuple[int, ...], negative_slope: float = 0.01) -> ConvParams:
    """The kernel's parameter block for ``spec`` on an input of ``input_shape`` (2-d: a trailing extent 1)."""
    out = spec.output_shape(input_shape)
    d = _padded3(input_shape[2:], 1)
    e = _padded3(out[2:], 1)
    return ConvParams(
        input_shape[0],
        input_shape[1],
        *d,
        out[1],
        *e,
        *_padded3(spec.kernel_size, 1),
        *_padded3(spec.stride, 1),
        *_padded3(tuple(before for before, _ in spec.padding), 0),
        *_padded3(spec.dilation, 1),
        spec.groups,
        int(spec.bias),
        ctypes.c_float(negative_slope).value,
    )


def padded_input_shape(spec: ConvSpec, input_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The input's shape after the zero padding the tiled kernels' launcher applies (before + after)."""
    spatial = [d + before + after for d, (before, after) in zip(input_shape[2:], spec.padding, strict=True)]
    return (*input_shape[:2], *spatial)


def term_table(spec: ConvSpec, padded_shape: tuple[int, ...]) -> torch.Tensor:
    """The tiled kernels' table of a group's K terms, channel outermost (conv_tile.cuh): int32 offsets of
    each term's input from the output pixel's corner in the zero-padded input, 0 past K up to a multiple
    of the chunk (16).

    Raises ShapeError where the kernels' 32-bit offsets do not reach, or when the kernel's third extent
    is not 1 (conv2d and conv3d (k, k, 1) are what the tiled kernels take).
    """
    d = _padded3(padded_shape[2:], 1)
    k = _padded3(spec.kernel_size, 1)
    dil = _padded3(spec.dilation, 1)
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
    padded = -(-offsets.numel() // _CHUNK) * _CHUNK
    return torch.nn.functional.pad(offsets, (0, padded - offsets.numel())).to(torch.int32).contiguous()


def launch_tiled(
    cubin: pathlib.Path,
    entry: str,
    spec: ConvSpec,
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    multiplier: torch.Tensor | None,
    out: torch.Tensor,
    negative_slope: float = 0.01,
) -> None:
    """Launch the tiled kernel ``entry`` (conv_tiled, conv_mma_tiled or conv_dmma_tiled) of ``cubin`` on
    checked tensors.

    The input goes in zero-padded (a copy, when the conv pads), the weights as [group][K][channel] (a
    copy, so each tile row of B is contiguous), with the term table beside them; the copies are made on
    ``x``'s device on the current stream, which orders their release after the kernel.
    """
    device = x.device
    og, groups = spec.out_channels // spec.groups, spec.groups
    K = weight[0].numel()
    pixels = out.shape[0] * math.prod(out.shape[2:])
    grid = ((pixels + _TILE_M - 1) // _TILE_M, groups * ((og + _TILE_N - 1) // _TILE_N))
    if grid[0] > _INT32_MAX or grid[1] > 65535:
        raise ShapeError(f"the output is too large for one tiled launch (grid {grid}; limits 2^31−1 × 65535)")
    padded_shape = padded_input_shape(spec, tuple(x.shape))
    table = _cached_table(spec, padded_shape, device)
    w_t = weight.reshape(groups, og, K).transpose(1, 2).contiguous()
    kernel = load_kernel(cubin, entry, device.index)
    null = ctypes.c_uint64(0)
    pointer = lambda t: ctypes.c_uint64(t.data_ptr()) if t is not None else null  # noqa: E731
    params = conv_params(spec, tuple(x.shape), negative_slope)
    if padded_shape != tuple(x.shape):
        # The kernels read the zero-padded input and need no bounds checks (conv_tile.cuh).
        pads = [p for before, after in reversed(spec.padding) for p in (before, after)]
        x = torch.nn.functional.pad(x, pads)
        params.d0, params.d1, params.d2 = _padded3(padded_shape[2:], 1)
        params.p0 = params.p1 = params.p2 = 0
    args = [pointer(x), pointer(w_t), pointer(bias), pointer(multiplier), pointer(out), pointer(table), params]
    shared = table.shape[0] * 4  # the table lives in dynamic shared memory
    if kernel.static_shared + shared > kernel.max_shared:
        raise ShapeError(
            f"the tiled kernels keep the {table.shape[0]} terms' table in shared memory: {shared} bytes + "
            f"{kernel.static_shared} of tiles exceed this GPU's {kernel.max_shared} per block; use a direct variant"
        )
    # The tiled kernels declare their block size in __launch_bounds__; the driver reports it.
    kernel.launch(grid, kernel.max_threads, args, torch.cuda.current_stream(device).cuda_stream, shared)


@functools.lru_cache(maxsize=64)
def _cached_table(spec: ConvSpec, padded_shape: tuple[int, ...], device: torch.device) -> torch.Tensor:
    """The term table on ``device``, made once per conv and input shape (it is read-only)."""
    return term_table(spec, padded_shape).to(device)


def _check_tensor(name: str, t, shape: tuple[int, ...]) -> torch.Tensor:
    """Type, dtype, shape and layout of one argument (devices are checked after all of these)."""
    if not isinstance(t, torch.Tensor):
        raise DtypeError(f"{name} must be a torch.Tensor on a CUDA device, got {type(t).__name__}")
    if t.dtype != torch.float32:
        raise DtypeError(f"{name} must be float32, got {t.dtype}")
    if tuple(t.shape) != tuple(shape):
        raise ShapeError(f"{name} must have shape {list(shape)}, got {list(t.shape)}")
    if not t.is_contiguous():
        raise ShapeError(f"{name} must be contiguous (call .contiguous()); got strides {t.stride()}")
    return t


def _check_devices(tensors: dict[str, torch.Tensor]) -> torch.device:
    devices = {name: t.device for name, t in tensors.items()}
    if devices["x"].type != "cuda":
        raise DtypeError(f"x must be on a CUDA device, got {devices['x']}")
    for name, device in devices.items():
        if device != devices["x"]:
            raise DtypeError(f"{name} is on {device} but x is on {devices['x']}: all tensors must share one device")
    return devices["x"]


def _check_op(variant: VariantSpec, spec: ConvSpec) -> None:
    dims = {Op.CONV2D: 2, Op.CONV_GELU: 2, Op.CONV3D_KK1: 3}[variant.op]
    if spec.spatial_dims != dims:
        raise ParameterError(f"variant op {variant.op.value!r} needs a {dims}-d conv spec, got {spec.spatial_dims}-d")
    if variant.op is Op.CONV3D_KK1 and spec.kernel_size[2] != 1:
        raise ParameterError(f"conv3d_kk1 needs kernel_size[2] == 1, got kernel_size={spec.kernel_size}")


def run_variant(
    variant: VariantSpec,
    spec: ConvSpec,
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None = None,
    multiplier: torch.Tensor | None = None,
    negative_slope: float = 0.01,
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """Run ``variant`` of the conv ``spec`` (plus the epilogue for conv_gelu) and return a new tensor.

    Every argument is checked before anything is launched: CUDA float32 contiguous tensors of the shapes
    the spec implies (``bias`` exactly when ``spec.bias``; ``multiplier`` of shape (C_out, 1, 1) exactly
    for conv_gelu), all on one device. ``out`` (optional) receives the result and is returned.
    """
    if not isinstance(variant, VariantSpec):
        raise ParameterError(f"variant must be a VariantSpec, got {type(variant).__name__}")
    if not isinstance(spec, ConvSpec):
        raise ParameterError(f"spec must be a ConvSpec, got {type(spec).__name__}")
    _check_op(variant, spec)
    if not isinstance(x, torch.Tensor):
        raise DtypeError(f"x must be a torch.Tensor on a CUDA device, got {type(x).__name__}")
    out_shape = spec.output_shape(tuple(x.shape))
    tensors = {"x": _check_tensor("x", x, tuple(x.shape)), "weight": _check_tensor("weight", weight, spec.weight_shape)}
    if spec.bias:
        if bias is None:
            raise ParameterError("the spec has bias=True but bias is None")
        tensors["bias"] = _check_tensor("bias", bias, (spec.out_channels,))
    elif bias is not None:
        raise ParameterError("the spec has bias=False but a bias tensor was given")
    if variant.op is Op.CONV_GELU:
        if multiplier is None:
            raise ParameterError("conv_gelu needs multiplier, a (C_out, 1, 1) tensor")
        tensors["multiplier"] = _check_tensor("multiplier", multiplier, (spec.out_channels, 1, 1))
    elif multiplier is not None:
        raise ParameterError(f"multiplier is only for op 'conv_gelu', not {variant.op.value!r}")
    if out is not None:
        tensors["out"] = _check_tensor("out", out, out_shape)
    device = _check_devices(tensors)
    if out is None:
        out = torch.empty(out_shape, dtype=torch.float32, device=device)
    params = conv_params(spec, tuple(x.shape), negative_slope)
    if out.numel() == 0:
        return out
    with torch.cuda.device(device):
        if variant.schedule is Schedule.TILED:
            launch_tiled(build(variant), variant.entry, spec, x, weight, bias, multiplier, out, negative_slope)
            return out
        kernel = load_kernel(build(variant), variant.entry, device.index)
        if variant.tensor_core is TensorCore.NONE:
            threads = out.numel()
        else:
            og = spec.out_channels // spec.groups
            pixels = out_shape[0] * out_shape[2] * out_shape[3]
            threads = 32 * ((pixels + 15) // 16) * ((og + 7) // 8) * spec.groups
        grid = (threads + _BLOCK - 1) // _BLOCK
        if grid >= 2**31:
            raise ShapeError(f"the output is too large for one launch ({threads} threads)")
        null = ctypes.c_uint64(0)
        pointer = lambda t: ctypes.c_uint64(t.data_ptr()) if t is not None else null  # noqa: E731
        args = [pointer(x), pointer(weight), pointer(bias), pointer(multiplier), pointer(out), params]
        kernel.launch(grid, _BLOCK, args, torch.cuda.current_stream(device).cuda_stream)
    return out
