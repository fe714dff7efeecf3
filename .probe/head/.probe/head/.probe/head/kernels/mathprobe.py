"""The probe of CUDA's math functions (kernels/mathprobe.cu): erff, tanhf, expf, 1/x and the two GELU formulas of
PyTorch's kernels, elementwise on the GPU, built with or without --use_fast_math. The GPU validation
(``fpa_kernels.validation.fast_math_probe``) and the sweeps (``fp_analysis.study.sweeps.cuda_gelu_forms``) read it.
"""

from __future__ import annotations

import ctypes

import numpy as np
import torch

from .driver import Kernel
from .registry import KERNELS

__all__ = ["MATH_PROBE_ROWS", "cuda_math_probe"]

MATH_PROBE_ROWS = ("erff", "tanhf", "expf", "reciprocal", "gelu_erf", "gelu_tanh")


def cuda_math_probe(x: torch.Tensor, fast_math: bool) -> np.ndarray:
    """CUDA's erff, tanhf, expf, 1/x and the two GELU formulas of PyTorch's kernels on the CUDA float32 tensor
    ``x`` (kernels/mathprobe.cu, built with or without --use_fast_math): float32 array (6, n), rows in
    ``MATH_PROBE_ROWS`` order."""
    n = x.numel()
    kernel = Kernel(KERNELS["mathprobe"].cubin(flags=["--use_fast_math"] if fast_math else []), "mathprobe")
    out = torch.empty(len(MATH_PROBE_ROWS) * n, device=x.device)
    args = [ctypes.c_uint64(x.data_ptr()), ctypes.c_uint64(out.data_ptr()), ctypes.c_longlong(n)]
    kernel.launch((n + 255) // 256, 256, args, torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    return out.view(len(MATH_PROBE_ROWS), n).cpu().numpy()
