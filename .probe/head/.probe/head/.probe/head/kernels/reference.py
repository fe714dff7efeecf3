"""The fast fp64 reference on a GPU: conv_dmma_tiled.cu, the fp64 tensor cores on the tiled kernels'
shared-memory tiles, writing the double sums.

Each product of two fp32 values is exact in double, so the result is a double sum of the exact
products: the same value as any fp64 evaluation up to fp64 rounding (the bound is γ_K in double,
Higham 2002, "Accuracy and Stability of Numerical Algorithms", §3.1). cuDNN's fp64 convolution
(44.8 ms on the seed-000 conv on an H100) does not use the fp64 tensor cores for it.
"""

from __future__ import annotations

import torch

from fp_analysis.errors import DtypeError, ParameterError
from fp_analysis.ops.conv import ConvSpec

from .call import ConvCall
from .general import launch_tiled
from .launch import _check_devices, _check_tensor
from .registry import KERNELS

__all__ = ["conv_fp64"]


def conv_fp64(spec: ConvSpec, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """The convolution ``spec`` of float32 CUDA tensors, summed in double: a float64 tensor.

    Inputs are checked as ``fpa_kernels.run_variant`` checks them (float32, contiguous, shapes, one
    device; a bias exactly when ``spec.bias``). The bias starts each double sum.
    """
    if not isinstance(spec, ConvSpec):
        raise DtypeError(f"spec must be a ConvSpec, got {type(spec).__name__}")
    if not isinstance(x, torch.Tensor):
        raise DtypeError(f"x must be a torch.Tensor on a CUDA device, got {type(x).__name__}")
    tensors = {"x": _check_tensor("x", x, tuple(x.shape)), "weight": _check_tensor("weight", weight, spec.weight_shape)}
    if spec.bias:
        if bias is None:
            raise ParameterError("the spec has bias=True but bias is None")
        tensors["bias"] = _check_tensor("bias", bias, (spec.out_channels,))
    elif bias is not None:
        raise ParameterError("the spec has bias=False but a bias tensor was given")
    device = _check_devices(tensors)
    out = torch.empty(spec.output_shape(tuple(x.shape)), dtype=torch.float64, device=device)
    if out.numel():
        with torch.cuda.device(device):
            cubin = KERNELS["conv_dmma_tiled"].cubin()
            launch_tiled(cubin, "conv_dmma_tiled", ConvCall(spec, x, weight, bias, out=out))
    return out
