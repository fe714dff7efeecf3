"""Run a kernel variant on torch CUDA tensors: validate everything first, then build, load and launch."""

from __future__ import annotations

import functools
import math
import pathlib

import torch

from fp_analysis.errors import DtypeError, ParameterError, ShapeError
from fp_analysis.ops.conv import ConvSpec

from .build import DEFAULT_ARCH, build
from .driver import device_pointer, load_kernel
from .params import ConvParams, _padded3, conv_params, padded_input_shape
from .rows import ROWS_SOURCE, launch_rows, rows_defines, rows_unsupported
from .variants import Op, Schedule, TensorCore, VariantSpec
from .wgmma import WGMMA_ARCH, WGMMA_SOURCE, launch_wgmma, wgmma_defines, wgmma_unsupported

__all__ = [
    "ConvParams",
    "conv_params",
    "launch_tiled",
    "padded_input_shape",
    "run_build",
    "run_variant",
    "term_table",
    "tiled_kernel",
    "tiled_kernels",
    "variant_runs",
]

_BLOCK = 128
_TILE_M, _TILE_N, _CHUNK = 128, 64, 16  # conv_tile.cuh: BM, BN, BK
_INT32_MAX = 2**31 - 1


def tiled_kernels(variant: VariantSpec, spec: ConvSpec, input_shape: tuple[int, ...] | None = None) -> list[str]:
    """The kernels that can run a tiled ``variant`` for ``spec``, the expected fastest first: conv_rows
    (CUDA cores) or conv_wgmma (tensor cores) where they take the conv (each was faster than the im2col
    kernel on every preset and variant it takes, bench_h200.json), then the im2col kernel of the variant's
    own source (conv_tiled, conv_mma_tiled), which takes every conv. The choice never changes a twinned
    variant's bits: conv_rows and conv_tiled run the same chain in the same order. conv_rows takes a 3-d
    conv only given ``input_shape`` (``fpa_kernels.rows.rows_view``)."""
    if variant.schedule is not Schedule.TILED:
        raise ParameterError(f"tiled kernels run tiled variants, got schedule={variant.schedule.value!r}")
    if variant.tensor_core is not TensorCore.NONE:
        return (["conv_wgmma"] if wgmma_unsupported(variant, spec) is None else []) + [variant.entry]
    if rows_unsupported(variant, spec, input_shape) is not None:
        return [variant.entry]
    return ["conv_rows", variant.entry]


def tiled_kernel(variant: VariantSpec, spec: ConvSpec, input_shape: tuple[int, ...] | None = None) -> str:
    """The kernel ``run_variant`` runs a tiled ``variant`` of ``spec`` on an input of ``input_shape`` with:
    the first of ``tiled_kernels``."""
    return tiled_kernels(variant, spec, input_shape)[0]


def variant_runs(
    variants: list[VariantSpec], spec: ConvSpec, input_shape: tuple[int, ...] | None = None
) -> list[tuple[str, VariantSpec, str | None]]:
    """(label, variant, kernel) for each way to run ``variants`` on ``spec`` (on an input of ``input_shape``,
    which decides whether conv_rows takes a 3-d conv), as ``fpa bench`` and the GPU
    validation run them: a tiled variant on the kernel ``run_variant`` picks (its plain label) and on every
    slower kernel that also takes the conv (label + `` [kernel]``), so that a kernel and the one it
    replaced are checked and timed in the same run. Untiled variants: (label, variant, None)."""
    runs = []
    for variant in variants:
        if variant.schedule is not Schedule.TILED:
            runs.append((variant.label, variant, None))
            continue
        first, *others = tiled_kernels(variant, spec, input_shape)
        runs.append((variant.label, variant, first))
        runs += [(f"{variant.label} [{kernel}]", variant, kernel) for kernel in others]
    return runs


def run_build(
    variant: VariantSpec, spec: ConvSpec, kernel: str | None, input_shape: tuple[int, ...] | None = None
) -> tuple[str, dict[str, int], list[str], str]:
    """(source, defines, nvcc flags, arch) of the cubin that running ``variant`` of ``spec`` on ``kernel``
    (one of ``tiled_kernels``, or None for an untiled variant) builds, on an input of ``input_shape`` (which
    a 3-d conv on conv_rows needs): lets a caller build many at once."""
    if kernel == "conv_rows":
        return ROWS_SOURCE, rows_defines(variant, spec, input_shape), variant.nvcc_flags(), DEFAULT_ARCH
    if kernel == "conv_wgmma":
        return WGMMA_SOURCE, wgmma_defines(variant, spec), [], WGMMA_ARCH
    return variant.source, variant.defines(), variant.nvcc_flags(), DEFAULT_ARCH


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
    params = conv_params(spec, tuple(x.shape), negative_slope)
    if padded_shape != tuple(x.shape):
        # The kernels read the zero-padded input and need no bounds checks (conv_tile.cuh).
        pads = [p for before, after in reversed(spec.padding) for p in (before, after)]
        x = torch.nn.functional.pad(x, pads)
        params.d0, params.d1, params.d2 = _padded3(padded_shape[2:], 1)
        params.p0 = params.p1 = params.p2 = 0
    args = [*map(device_pointer, (x, w_t, bias, multiplier, out, table)), params]
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
    kernel: str | None = None,
) -> torch.Tensor:
    """Run ``variant`` of the conv ``spec`` (plus the epilogue for conv_gelu) and return a new tensor.

    Every argument is checked before anything is launched: CUDA float32 contiguous tensors of the shapes
    the spec implies (``bias`` exactly when ``spec.bias``; ``multiplier`` of shape (C_out, 1, 1) exactly
    for conv_gelu), all on one device. ``out`` (optional) receives the result and is returned.
    ``kernel`` (tiled variants only) picks one of ``tiled_kernels(variant, spec, x.shape)`` instead of the
    fastest, ``tiled_kernel(variant, spec, x.shape)``: e.g. to time the im2col kernel beside the one that replaced it.
    """
    if not isinstance(variant, VariantSpec):
        raise ParameterError(f"variant must be a VariantSpec, got {type(variant).__name__}")
    if not isinstance(spec, ConvSpec):
        raise ParameterError(f"spec must be a ConvSpec, got {type(spec).__name__}")
    _check_op(variant, spec)
    if kernel is not None:
        if variant.schedule is not Schedule.TILED:
            raise ParameterError(f"kernel= applies to tiled variants only, not schedule={variant.schedule.value!r}")
        allowed = tiled_kernels(variant, spec, tuple(x.shape) if isinstance(x, torch.Tensor) else None)
        if kernel not in allowed:
            raise ParameterError(f"Got kernel={kernel!r}, but this variant and conv allow only {allowed}.")
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
            kernel_name = kernel or tiled_kernel(variant, spec, tuple(x.shape))
            if kernel_name == "conv_rows":
                launch_rows(variant, spec, x, weight, bias, multiplier, out, negative_slope)
            elif kernel_name == "conv_wgmma":
                launch_wgmma(variant, spec, x, weight, bias, out)
            else:
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
        args = [*map(device_pointer, (x, weight, bias, multiplier, out)), params]
        kernel.launch(grid, _BLOCK, args, torch.cuda.current_stream(device).cuda_stream)
    return out
