"""The conv_gelu epilogue: y · multiplier → LeakyReLU(negative_slope) → GELU, in torch and in mpmath.

This is the elementwise tail of KernelBench level 2 problem 54 (``54_Conv2d_Multiply_LeakyReLU_GELU``):
``x = conv(x); x = x * multiplier; x = leaky_relu(x); x = gelu(x)``, with a per-channel multiplier
of shape (out_channels, 1, 1).

Formulas:
- LeakyReLU(x) = x if x > 0 else negative_slope · x (Maas, Hannun & Ng 2013, "Rectifier
  Nonlinearities Improve Neural Network Acoustic Models"; ``torch.nn.LeakyReLU`` docs).
- GELU(x) = x · Φ(x) = 0.5 · x · (1 + erf(x / √2)) (Hendrycks & Gimpel 2016, "Gaussian Error Linear
  Units (GELUs)", arXiv:1606.08415, §2).
- GELU_tanh(x) = 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³))) (same paper, §2, the tanh
  approximation; ``torch.nn.GELU(approximate='tanh')``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

import mpmath
import numpy as np
import torch
import torch.nn.functional as F

from ..errors import DtypeError, ParameterError
from ..numerics.gelu32 import GeluForm

__all__ = [
    "EpilogueSpec",
    "Extremum",
    "GeluForm",
    "epilogue_mpmath",
    "epilogue_torch",
    "gelu_derivative_extremum",
    "gelu_derivative_max",
    "gelu_tanh_vs_erf_extremum",
    "gelu_tanh_vs_erf_max",
]

# Coefficient of the cubic term of the tanh approximation (Hendrycks & Gimpel 2016, §2).
_GELU_TANH_CUBIC = "0.044715"


@dataclass(frozen=True)
class EpilogueSpec:
    """Parameters of multiplier → LeakyReLU → GELU.

    ``negative_slope`` defaults to 0.01, ``torch.nn.LeakyReLU``'s default (the one KernelBench uses);
    ``approximate`` is a ``GeluForm`` or its string value.
    """

    negative_slope: float = 0.01
    approximate: GeluForm = GeluForm.NONE

    def __post_init__(self) -> None:
        slope = self.negative_slope
        if isinstance(slope, bool) or not isinstance(slope, (int, float, np.floating, np.integer)):
            raise ParameterError(f"negative_slope must be a finite real number, got {slope!r}")
        if not math.isfinite(float(slope)):
            raise ParameterError(f"negative_slope must be a finite real number, got {slope!r}")
        object.__setattr__(self, "negative_slope", float(slope))
        try:
            form = GeluForm(self.approximate)
        except ValueError:
            allowed = ", ".join(repr(f.value) for f in GeluForm)
            raise ParameterError(f"approximate must be one of {allowed}; got {self.approximate!r}") from None
        object.__setattr__(self, "approximate", form)


def _validated_spec(spec: Any) -> EpilogueSpec:
    if spec is None:
        return EpilogueSpec()
    if not isinstance(spec, EpilogueSpec):
        raise ParameterError(f"spec must be an EpilogueSpec (or None for the defaults), got {type(spec).__name__}")
    return spec


def epilogue_torch(
    y: torch.Tensor, multiplier_per_output: torch.Tensor, spec: EpilogueSpec | None = None
) -> torch.Tensor:
    """Return gelu(leaky_relu(y · multiplier)) computed with torch ops in ``y``'s dtype.

    The same three ops as KernelBench's ``Model.forward``, so float32 input reproduces what PyTorch
    computes in fp32 on the same device and float64 input gives the fp64 reference. The multiplier
    is cast to ``y``'s dtype first (exact for fp32 → fp64) and must broadcast against ``y``.

    Bitwise agreement with the module needs the same tensor (shape, layout, thread count): torch's
    CPU GELU uses a vectorised erf/tanh for the body of each contiguous range and a scalar one for
    its tail, and the two differ in the last bit (measured on AVX-512, torch 2.13: ~30% of fp32 and
    ~2% of fp64 elements change when evaluated one at a time instead of as one tensor).
    """
    spec = _validated_spec(spec)
    if not isinstance(y, torch.Tensor) or not y.is_floating_point():
        raise DtypeError(f"y must be a floating-point torch.Tensor, got {type(y).__name__}")
    if not isinstance(multiplier_per_output, torch.Tensor):
        raise DtypeError(f"multiplier_per_output must be a torch.Tensor, got {type(multiplier_per_output).__name__}")
    try:
        torch.broadcast_shapes(y.shape, multiplier_per_output.shape)
    except RuntimeError:
        raise ParameterError(
            f"multiplier_per_output of shape {list(multiplier_per_output.shape)} does not broadcast "
            f"against y of shape {list(y.shape)}"
        ) from None
    z = y * multiplier_per_output.to(device=y.device, dtype=y.dtype)
    z = F.leaky_relu(z, negative_slope=spec.negative_slope)
    return F.gelu(z, approximate=spec.approximate.value)


# --------------------------------------------------------------------------------------------------
# mpmath versions (the caller sets nothing: every function runs under its own workdps)
# --------------------------------------------------------------------------------------------------


def _leaky_relu_mp(x: mpmath.mpf, slope: mpmath.mpf) -> mpmath.mpf:
    return x if x > 0 else slope * x


def _gelu_erf_mp(x: mpmath.mpf) -> mpmath.mpf:
    """0.5·x·(1 + erf(x/√2)) (Hendrycks & Gimpel 2016, §2)."""
    return x * (1 + mpmath.erf(x / mpmath.sqrt(2))) / 2


def _gelu_tanh_mp(x: mpmath.mpf) -> mpmath.mpf:
    """0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))) (Hendrycks & Gimpel 2016, §2)."""
    inner = mpmath.sqrt(2 / mpmath.pi) * (x + mpmath.mpf(_GELU_TANH_CUBIC) * x**3)
    return x * (1 + mpmath.tanh(inner)) / 2


def _validated_dps(dps: Any) -> int:
    if isinstance(dps, bool) or not isinstance(dps, (int, np.integer)) or dps < 17:
        raise ParameterError(f"dps must be an integer >= 17 (decimal digits; fp64 needs 17), got {dps!r}")
    return int(dps)


def epilogue_mpmath(
    y_values: Iterable[Any], m_values: Iterable[Any], spec: EpilogueSpec | None = None, dps: int = 50
) -> list[mpmath.mpf]:
    """Return gelu(leaky_relu(y · m)) per element in mpmath at ``dps`` decimal digits.

    ``y_values`` and ``m_values`` are equal-length sequences of numbers (float, numpy scalars, mpf);
    floats are converted exactly. The slope is the float ``spec.negative_slope`` (0.01 is not exact in
    binary; torch also uses the double closest to 0.01), converted exactly.
    """
    spec = _validated_spec(spec)
    dps = _validated_dps(dps)
    ys = list(y_values)
    ms = list(m_values)
    if len(ys) != len(ms):
        raise ParameterError(f"y_values and m_values must have the same length, got {len(ys)} and {len(ms)}")
    gelu = _gelu_erf_mp if spec.approximate is GeluForm.NONE else _gelu_tanh_mp
    with mpmath.workdps(dps):
        slope = mpmath.mpf(spec.negative_slope)
        return [
            gelu(_leaky_relu_mp(mpmath.mpf(_exact(y)) * mpmath.mpf(_exact(m)), slope))
            for y, m in zip(ys, ms, strict=True)
        ]


def _exact(value: Any) -> Any:
    """numpy float32/float64 scalars → Python float (exact), leaving mpf and Python numbers alone."""
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    if isinstance(value, torch.Tensor):
        return value.item()
    return value


# --------------------------------------------------------------------------------------------------
# Constants of GELU used by error propagation (computed, not typed in)
# --------------------------------------------------------------------------------------------------


class Extremum(NamedTuple):
    """Where a function of one variable reaches its maximum, and the value there."""

    argmax: float
    value: float


@functools.cache
def gelu_derivative_extremum(dps: int = 30) -> Extremum:
    """Return (x*, max GELU′) for GELU′(x) = Φ(x) + x·φ(x) (derivative of x·Φ(x), Hendrycks & Gimpel 2016).

    GELU″(x) = 2φ(x) + x·φ′(x) = φ(x)·(2 − x²), so the maximum is where GELU″ = 0 at x > 0; it is
    found with ``mpmath.findroot`` on GELU″ (the root is √2), not typed in.
    """
    dps = _validated_dps(dps)
    with mpmath.workdps(dps):

        def pdf(x: mpmath.mpf) -> mpmath.mpf:
            return mpmath.npdf(x)

        def second_derivative(x: mpmath.mpf) -> mpmath.mpf:
            return 2 * pdf(x) - x * x * pdf(x)

        def first_derivative(x: mpmath.mpf) -> mpmath.mpf:
            return mpmath.ncdf(x) + x * pdf(x)

        x_star = mpmath.findroot(second_derivative, mpmath.mpf(1.5))
        return Extremum(float(x_star), float(first_derivative(x_star)))


def gelu_derivative_max() -> float:
    """Return max_x GELU′(x) = Φ(√2) + √2·φ(√2) ≈ 1.129 (see ``gelu_derivative_extremum``).

    This is the Lipschitz constant of GELU: an input error δ moves GELU by at most this · |δ|.
    """
    return gelu_derivative_extremum().value


@functools.cache
def gelu_tanh_vs_erf_extremum() -> Extremum:
    """Return (x*, max_x |GELU_tanh(x) − GELU_erf(x)|), x* ≥ 0 (Hendrycks & Gimpel 2016, §2 forms).

    The difference d(x) = 0.5·x·(tanh(√(2/π)(x + 0.044715x³)) − erf(x/√2)) is even, and tends to 0 as
    |x| → ∞ (both brackets → ±1), so its maximum is found by a dense float64 scan of [0, 10] followed by
    ``mpmath.findroot`` on d′ from the best grid point.
    """
    grid = np.linspace(0.0, 10.0, 100_001)
    erf_part = torch.special.erf(torch.from_numpy(grid / math.sqrt(2.0))).numpy()
    tanh_part = np.tanh(math.sqrt(2.0 / math.pi) * (grid + 0.044715 * grid**3))
    diff = np.abs(0.5 * grid * (tanh_part - erf_part))
    x0 = float(grid[int(np.argmax(diff))])
    with mpmath.workdps(30):

        def d(x: mpmath.mpf) -> mpmath.mpf:
            return _gelu_tanh_mp(x) - _gelu_erf_mp(x)

        x_star = mpmath.findroot(lambda x: mpmath.diff(d, x), mpmath.mpf(x0))
        return Extremum(float(x_star), float(abs(d(x_star))))


def gelu_tanh_vs_erf_max() -> float:
    """Return max_x |GELU_tanh(x) − GELU_erf(x)| (see ``gelu_tanh_vs_erf_extremum``)."""
    return gelu_tanh_vs_erf_extremum().value
