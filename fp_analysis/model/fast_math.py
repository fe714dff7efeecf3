"""What ``--use_fast_math`` computes, re-created op by op: the fast-math rewrite evaluates these instead of the exact
functions, so a fast-math candidate is re-created by its structure, not by an allowance wide enough for a bug.

Under ``--use_fast_math`` nvcc maps ``expf`` to ``__expf`` and ``logf`` to ``__logf``, and divides and takes square
roots approximately (``-prec-div=false -prec-sqrt=false``; CUDA C++ Programming Guide, "Intrinsic Functions").
``__expf(x)`` is ``ex2.approx.f32(x · log2 e)`` with the product rounded to fp32 — the source of its documented
error of 2 + 1.173·|x| ulp, which grows with |x| (the product's rounding error is an absolute error in the exponent;
PTX ISA, "ex2"). That rounding is re-created exactly here (``exp``), and with it the functions kernels build from
``expf``: sigmoid 1/(1 + e^−x), SiLU x·sigmoid(x), softplus log1p(e^x), softmax e^(x − max)/Σ, log-softmax and
logsumexp. What is left is each approximate instruction's own error, which ``residual_units`` allows per op, as
measured on an H200 (experiments/fast_math/probe.py → experiments/results/fast_math_probe_h200.json, in units of
2^-24·(|f(x)| + |x|), the floor's unit for an activation): ``__expf`` re-created to within 2.4, sigmoid 2.8,
softplus 2.3, SiLU 1.4, ``__logf`` 2.9 and rsqrtf, sqrt, division and erff 2.0 of their exact values (so those stay
exact here). ``tanhf`` under fast-math is the hardware's tanh approximation, whose algorithm is not published: it is
85 units from tanh over the whole range, at small |x| too, and none of the forms through ``__expf`` comes closer
(the probe holds four), so tanh, the tanh form of GELU (61) and Mish (72) keep their exact values with that
measured allowance.

Each function takes and returns float64 tensors (the engine's fp64 evaluation); only the roundings that fast-math
makes structurally large are rounded to fp32.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

__all__ = ["EMULATED", "exp", "residual_units"]

# CUDART_L2E_F: log2(e) as the fp32 constant __expf multiplies by.
_L2E_F = float(torch.tensor(1.0 / math.log(2.0), dtype=torch.float32))
# What a re-created op is left off by (module docstring: the H200's largest over the probe, rounded up with ~10 %).
_RESIDUAL = 4.0  # __expf's forms, __logf, rsqrtf, sqrt, division, erff: at most 3.7
_RESIDUAL_TANH = 96.0  # tanhf's hardware approximation: 85.4 (the tanh form of GELU 61, Mish 72)
_THROUGH_TANH = {"tanh", "mish"}


def _fp32(t: torch.Tensor) -> torch.Tensor:
    """``t`` rounded to fp32 (nearest even), kept in its dtype."""
    return t.to(torch.float32).to(t.dtype)


def exp(x: torch.Tensor) -> torch.Tensor:
    """``__expf(x)``: 2^(x · log2 e), the product rounded to fp32 as ``ex2.approx`` receives it."""
    return torch.exp2(_fp32(x * _L2E_F))


def residual_units(name: str, kwargs: dict) -> float:
    """How far fast-math's form of ATen op ``name`` (called with ``kwargs``) may be from its re-creation, in the
    floor's units (module docstring)."""
    through_tanh = name.rstrip("_") in _THROUGH_TANH or (name == "gelu" and kwargs.get("approximate") == "tanh")
    return _RESIDUAL_TANH if through_tanh else _RESIDUAL


def _sigmoid(x):
    return 1.0 / (1.0 + exp(-x))


def _softplus(x, beta=1.0, threshold=20.0):
    z = beta * x
    return torch.where(z > threshold, x, torch.log1p(exp(z)) / beta)


def _softmax(x, dim, half_to_float=False):
    e = exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


def _log_softmax(x, dim, half_to_float=False):
    shifted = x - x.amax(dim=dim, keepdim=True)
    return shifted - torch.log(exp(shifted).sum(dim=dim, keepdim=True))


def _logsumexp(x, dim, keepdim=False):
    dims = tuple(dim) if isinstance(dim, (list, tuple)) else (dim,)
    m = x.amax(dim=dims, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # as torch: a row of −inf gives −inf, +inf gives +inf
    out = m + torch.log(exp(x - m).sum(dim=dims, keepdim=True))
    return out if keepdim else out.squeeze(dims)


# ATen op name → its fast-math form, called with the op's arguments.
EMULATED: dict[str, Callable] = {
    "exp": lambda x: exp(x),
    "sigmoid": _sigmoid,
    "silu": lambda x: x * _sigmoid(x),
    "softplus": _softplus,
    "_softmax": _softmax,
    "_log_softmax": _log_softmax,
    "logsumexp": _logsumexp,
}
