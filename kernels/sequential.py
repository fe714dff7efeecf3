"""The naive kernels the engine re-creates sums in (kernels/sequential.cu): a matrix product with one fp32
accumulator per output and a fused multiply-add per term in k order, and a row's sum or running sums added first to
last. On the GPU they run the order in one launch where a torch loop over the terms launches an operation per term
(``fp_analysis.model.reduction_orders``: 0.4 M launches for K = 131072); their bits are the loop's, bit for bit —
the dot product's a true ``fmaf`` chain, which the loop re-creates but for a rare double rounding.

``available(tensor)`` says whether they can run: a CUDA tensor and an nvcc to build them with (built once, cached).
"""

from __future__ import annotations

import ctypes

import torch

from .build import BuildError, find_nvcc
from .driver import CudaError, device_pointer, load_kernel
from .registry import KERNELS

__all__ = ["available", "sequential_dot", "sequential_rows"]

_THREADS = 256
_BROKEN: set[str] = set()  # kernels whose build or load failed once in this process: not tried again


def available(tensor: torch.Tensor) -> bool:
    """Whether the kernels can run on ``tensor``'s device: CUDA, nvcc present, no earlier failure."""
    return tensor.is_cuda and not _BROKEN and find_nvcc() is not None


def _launch(name: str, count: int, args: list, device: torch.device) -> None:
    kernel = KERNELS[name]
    try:
        loaded = load_kernel(kernel.cubin(), name, device.index or 0)
    except (BuildError, CudaError, OSError):
        _BROKEN.add(name)
        raise
    if count:
        loaded.launch((count + _THREADS - 1) // _THREADS, _THREADS, args, torch.cuda.current_stream(device).cuda_stream)


def sequential_dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b for fp32 CUDA tensors a (batch, m, k) and b (batch, k, n), each output Σ_t a[.., t]·b[t, ..] by ``fmaf``
    in t order from 0; fp32 (batch, m, n)."""
    batch, m, k = a.shape
    n = b.shape[-1]
    terms_a = a.transpose(-1, -2).contiguous()  # (batch, k, m): a warp's threads share i, or read adjacent ones
    terms_b = b.contiguous()
    out = torch.empty(batch, m, n, dtype=torch.float32, device=a.device)
    sizes = [ctypes.c_longlong(v) for v in (batch, m, n, k)]
    _launch(
        "sequential_dot",
        out.numel(),
        [device_pointer(terms_a), device_pointer(terms_b), device_pointer(out), *sizes],
        a.device,
    )
    return out


def sequential_rows(rows: torch.Tensor, scan: bool) -> torch.Tensor:
    """For fp32 CUDA ``rows`` (r, n): each row's terms added first to last, in fp32; its total (r,), or with ``scan``
    every prefix (r, n)."""
    r, n = rows.shape
    terms = rows.t().contiguous()  # (n, r): term t of every row together
    out = torch.empty((n, r) if scan else (r,), dtype=torch.float32, device=rows.device)
    args = [
        device_pointer(terms),
        device_pointer(out),
        ctypes.c_longlong(r),
        ctypes.c_longlong(n),
        ctypes.c_int(int(scan)),
    ]
    _launch("sequential_rows", r, args, rows.device)
    return out.t() if scan else out
