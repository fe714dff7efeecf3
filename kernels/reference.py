"""The fast fp64 reference on a GPU: the tiled kernel with double accumulators, writing the double sums.

Each product of two fp32 values is exact in double, so the result is the sequential double sum of the
exact products in the input-channel-outermost order: the same value as any fp64 evaluation up to
fp64 rounding (the bound is γ_K in double, Higham 2002, "Accuracy and Stability of Numerical
Algorithms", §3.1). cuDNN's fp64 convolution runs on the CUDA cores' fp64 units too, but slowly for
dilated kernels; this one uses the same shared-memory tiles as the fast fp32 kernel.
"""

from __future__ import annotations

import torch

from fp_analysis.errors import DtypeError
from fp_analysis.ops.conv import ConvSpec
from fp_analysis.orders import AccumulationSpec, Order

from .build import build_source
from .launch import launch_tiled
from .variants import Op, Schedule, VariantSpec

__all__ = ["conv_fp64"]


def _cubin():
    variant = VariantSpec(Op.CONV2D, AccumulationSpec(Order.FP64), schedule=Schedule.TILED)
    return build_source(variant.source, {**variant.defines(), "FPA_OUT_DOUBLE": 1}, [])


def conv_fp64(spec: ConvSpec, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """The convolution ``spec`` of float32 CUDA tensors, summed in double: a float64 tensor.

    Inputs are checked as ``fpa_kernels.run_variant`` checks them (float32, contiguous, shapes, one
    device). A bias is added first, as the start of each double sum.
    """
    from .launch import _check_devices, _check_tensor  # the same checks as run_variant

    if not isinstance(spec, ConvSpec):
        raise DtypeError(f"spec must be a ConvSpec, got {type(spec).__name__}")
    if not isinstance(x, torch.Tensor):
        raise DtypeError(f"x must be a torch.Tensor on a CUDA device, got {type(x).__name__}")
    tensors = {"x": _check_tensor("x", x, tuple(x.shape)), "weight": _check_tensor("weight", weight, spec.weight_shape)}
    if spec.bias:
        if bias is None:
            raise DtypeError("the spec has bias=True but bias is None")
        tensors["bias"] = _check_tensor("bias", bias, (spec.out_channels,))
    device = _check_devices(tensors)
    out = torch.empty(spec.output_shape(tuple(x.shape)), dtype=torch.float64, device=device)
    if out.numel():
        with torch.cuda.device(device):
            launch_tiled(_cubin(), "conv_tiled", spec, x, weight, bias if spec.bias else None, None, out)
    return out
