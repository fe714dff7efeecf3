"""One conv for a kernel to compute: the spec and the tensors it reads and writes, as one record (``ConvCall``).

``run_call`` (fpa_kernels.launch) checks a call and gives it to the kernel it picks; every launcher
(``fpa_kernels.general``, ``rows``, ``wgmma``, the fp64 reference) and the registry's ``Kernel.launch`` take it as
it is, so the conv's arguments are written once, here.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from fp_analysis.ops.conv import ConvSpec

from .params import ConvParams, conv_params

__all__ = ["ConvCall"]


@dataclass(frozen=True)
class ConvCall:
    """The conv ``spec`` of the input ``x`` and ``weight`` (plus ``bias``, and conv_gelu's epilogue: ``multiplier``
    and the LeakyReLU ``negative_slope``), written to ``out``.

    The launchers take a call ``run_call`` has checked: CUDA float32 contiguous tensors of the shapes ``spec``
    implies, on one device, and ``out`` set. ``out`` None asks ``run_call`` for a new tensor.
    """

    spec: ConvSpec
    x: torch.Tensor
    weight: torch.Tensor
    bias: torch.Tensor | None = None
    multiplier: torch.Tensor | None = None
    negative_slope: float = 0.01
    out: torch.Tensor | None = None

    @property
    def input_shape(self) -> tuple[int, ...]:
        """``x``'s shape, as the kernels' refusals, defines and parameter block take it."""
        return tuple(self.x.shape)

    @property
    def stream(self) -> int:
        """The handle of the current CUDA stream of ``x``'s device, which every launch and copy goes on."""
        return torch.cuda.current_stream(self.x.device).cuda_stream

    def params(self) -> ConvParams:
        """The kernels' parameter block of this conv on this input (``fpa_kernels.params.conv_params``)."""
        return conv_params(self.spec, self.input_shape, self.negative_slope)
