"""Run a kernel variant on torch CUDA tensors: validate everything first (``run_call`` checks a ``ConvCall``), then
build, load and launch (the kernel is chosen, built and launched through ``fpa_kernels.registry``)."""

from __future__ import annotations

from dataclasses import replace

import torch

from fp_analysis.errors import DtypeError, ParameterError, ShapeError
from fp_analysis.ops.conv import ConvSpec

from .call import ConvCall
from .params import ConvParams, conv_params, padded_input_shape
from .registry import general_kernel, kernels_for, launch_kernel
from .variants import Op, Schedule, VariantSpec

__all__ = [
    "ConvCall",
    "ConvParams",
    "conv_params",
    "padded_input_shape",
    "run_call",
    "run_variant",
    "tiled_kernel",
    "tiled_kernels",
    "variant_runs",
]


def tiled_kernels(variant: VariantSpec, spec: ConvSpec, input_shape: tuple[int, ...] | None = None) -> list[str]:
    """The kernels that can run a tiled ``variant`` for ``spec``, the expected fastest first
    (``registry.kernels_for``): conv_rows (CUDA cores) or conv_wgmma (tensor cores) where they take the conv,
    then the im2col kernel (conv_tiled, conv_mma_tiled), which takes every conv. The choice never changes a
    twinned variant's bits: conv_rows and conv_tiled run the same chain in the same order. conv_rows takes a
    3-d conv only given ``input_shape`` (``fpa_kernels.rows.rows_view``)."""
    if variant.schedule is not Schedule.TILED:
        raise ParameterError(f"tiled kernels run tiled variants, got schedule={variant.schedule.value!r}")
    return [k.name for k in kernels_for(variant, spec, input_shape)]


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
    kernel: str | None = None,
) -> torch.Tensor:
    """Run ``variant`` of the conv ``spec`` (plus the epilogue for conv_gelu) and return a new tensor: ``run_call``
    of ``ConvCall(spec, x, weight, bias, multiplier, negative_slope)``, which also writes into a tensor of yours."""
    return run_call(variant, ConvCall(spec, x, weight, bias, multiplier, negative_slope), kernel)


def run_call(variant: VariantSpec, call: ConvCall, kernel: str | None = None) -> torch.Tensor:
    """Run ``variant`` of the conv ``call.spec`` (plus the epilogue for conv_gelu) and return its output.

    Every argument is checked before anything is launched: CUDA float32 contiguous tensors of the shapes
    the spec implies (``bias`` exactly when ``spec.bias``; ``multiplier`` of shape (C_out, 1, 1) exactly
    for conv_gelu), all on one device. ``call.out`` (optional) receives the result and is returned; without it
    the result is a new tensor. ``kernel`` (tiled variants only) picks one of ``tiled_kernels(variant, spec,
    x.shape)`` instead of the fastest, ``tiled_kernel(variant, spec, x.shape)``: e.g. to time the im2col kernel
    beside the one that replaced it.
    """
    if not isinstance(variant, VariantSpec):
        raise ParameterError(f"variant must be a VariantSpec, got {type(variant).__name__}")
    if not isinstance(call, ConvCall):
        raise ParameterError(f"call must be a ConvCall, got {type(call).__name__}")
    spec, x = call.spec, call.x
    if not isinstance(spec, ConvSpec):
        raise ParameterError(f"spec must be a ConvSpec, got {type(spec).__name__}")
    _check_op(variant, spec)
    if kernel is not None:
        if variant.schedule is not Schedule.TILED:
            raise ParameterError(f"kernel= applies to tiled variants only, not schedule={variant.schedule.value!r}")
        allowed = tiled_kernels(variant, spec, tuple(x.shape) if isinstance(x, torch.Tensor) else None)
        if kernel not in allowed:
            raise ParameterError(f"Got kernel={kernel!r}, but this variant and conv allow only {allowed}.")
    call = _checked(variant, call)
    if call.out.numel() == 0:
        return call.out
    with torch.cuda.device(x.device):  # a kernel's refusals may ask the current device (conv_wgmma: sm_90 only)
        if variant.schedule is Schedule.TILED:
            kernel = kernel or tiled_kernel(variant, spec, tuple(x.shape))
        else:
            kernel = general_kernel(variant).name
        launch_kernel(kernel, variant, call)
    return call.out


def _checked(variant: VariantSpec, call: ConvCall) -> ConvCall:
    """``call``, its tensors checked (see ``run_call``), with ``out`` allocated where it has none."""
    spec, x, weight, bias, multiplier, out = call.spec, call.x, call.weight, call.bias, call.multiplier, call.out
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
        return replace(call, out=torch.empty(out_shape, dtype=torch.float32, device=device))
    return call
