"""fp32 erf, tanh and GELU built from fused multiply-adds, products and sums only — bit-reproducible.

CUDA's ``erff`` / ``tanhf`` and the CPU's libm differ in their last bits, so a kernel that calls them
has no exact CPU twin. The kernels' "fpa" epilogue therefore uses these functions instead: each is a
fixed sequence of IEEE fp32 operations (``fma32``, ``mul32``, ``add32`` and bit operations), so the same
sequence on the GPU (``__fmaf_rn``, ``__fmul_rn``, ``__fadd_rn``) gives the same bits. The polynomial
tables are data (``data/gelu_tables.json``, fitted by ``experiments/fit_gelu_tables.py``): degree-7
pieces of width 1/4 on [0, 4) for erf and [0, 9.5) for tanh, evaluated by Horner's rule in t = |x| − left
end (which is exact: Sterbenz's lemma); erf and tanh are odd, so the sign is copied from the argument.
GELU follows Hendrycks & Gimpel 2016 (arXiv:1606.08415): 0.5·x·(1 + erf(x/√2)) and the tanh form
0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), in exactly the operation order written in each function.
"""

from __future__ import annotations

import json
import pathlib
from enum import Enum

import numpy as np

from ..errors import enum_member
from .arith import add32, fma32, mul32

__all__ = ["CONSTANTS", "TABLES", "GeluForm", "epilogue32", "erf32", "gelu32", "tanh32"]

_F32 = np.float32


def _load_tables() -> dict[str, tuple[np.ndarray, float, float]]:
    raw = json.loads((pathlib.Path(__file__).parent / "data" / "gelu_tables.json").read_text())
    return {
        name: (
            np.array([[float.fromhex(c) for c in row] for row in t["coefficients"]], dtype=_F32),
            float(t["width"]),
            float(t["cutoff"]),
        )
        for name, t in raw.items()
    }


TABLES = _load_tables()  # name → (coefficients (intervals, 8) float32, interval width, cutoff)

CONSTANTS = {
    "SQRT1_2": _F32(0.7071067811865476),  # 1/√2 rounded to fp32
    "SQRT_2_OVER_PI": _F32(0.7978845608028654),  # √(2/π) rounded to fp32
    "GELU_TANH_CUBIC": _F32(0.044715),
    "HALF": _F32(0.5),
    "ONE": _F32(1.0),
}


class GeluForm(str, Enum):
    """Which GELU formula: the values are ``torch.nn.GELU(approximate=...)``'s; ``formula`` names the function
    each evaluates (variant labels print it). The one GELU vocabulary of the reference, the epilogue specs, the
    fp32 twins and the kernels."""

    NONE = "none"
    """Exact GELU: 0.5·x·(1 + erf(x/√2)) (Hendrycks & Gimpel 2016, §2); PyTorch's default."""
    TANH = "tanh"
    """Tanh approximation: 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))) (Hendrycks & Gimpel 2016, §2)."""

    @property
    def formula(self) -> str:
        """The function the form evaluates: "erf" or "tanh"."""
        return "erf" if self is GeluForm.NONE else "tanh"


def _odd_piecewise(z: np.ndarray, name: str, ftz: bool) -> np.ndarray:
    coeffs, width, cutoff = TABLES[name]
    z = np.asarray(z, dtype=_F32)
    bits = z.view(np.uint32)
    a = (bits & np.uint32(0x7FFFFFFF)).view(_F32)  # |z| by clearing the sign bit: exact, never flushed
    inside = a < _F32(cutoff)
    scale = _F32(1 / width)
    index = np.where(inside, mul32(a, scale, ftz=ftz), 0).astype(np.int32)  # truncation, as (int) in C
    left = mul32(index.astype(_F32), _F32(width), ftz=ftz)
    t = add32(a, -left, ftz=ftz)
    c = coeffs[index]
    r = c[..., -1]
    for j in range(coeffs.shape[1] - 2, -1, -1):
        r = fma32(r, t, c[..., j], ftz=ftz)
    r = np.where(inside, r, _F32(1.0))
    signed = (r.view(np.uint32) | (bits & np.uint32(0x80000000))).view(_F32)
    return np.where(np.isnan(z), z, signed)


def erf32(z, *, ftz: bool = False) -> np.ndarray:
    """erf of fp32 values with the project's piecewise polynomial; NaN stays NaN, ±∞ give ±1."""
    return _odd_piecewise(z, "erf", ftz)


def tanh32(y, *, ftz: bool = False) -> np.ndarray:
    """tanh of fp32 values with the project's piecewise polynomial; NaN stays NaN, ±∞ give ±1."""
    return _odd_piecewise(y, "tanh", ftz)


def gelu32(x, form: GeluForm | str = GeluForm.NONE, *, ftz: bool = False) -> np.ndarray:
    """GELU of fp32 values, in the fixed operation order the CUDA epilogue uses (see the module docstring)."""
    x = np.asarray(x, dtype=_F32)
    k = CONSTANTS
    half_x = mul32(k["HALF"], x, ftz=ftz)
    if enum_member(GeluForm, form, "form") is GeluForm.NONE:
        inner = erf32(mul32(x, k["SQRT1_2"], ftz=ftz), ftz=ftz)
    else:
        cube = mul32(mul32(x, x, ftz=ftz), x, ftz=ftz)
        arg = mul32(k["SQRT_2_OVER_PI"], fma32(k["GELU_TANH_CUBIC"], cube, x, ftz=ftz), ftz=ftz)
        inner = tanh32(arg, ftz=ftz)
    return mul32(half_x, add32(k["ONE"], inner, ftz=ftz), ftz=ftz)


def epilogue32(acc, multiplier, negative_slope: float, form: GeluForm | str, *, ftz: bool = False) -> np.ndarray:
    """gelu(leaky_relu(acc·m)) in fp32: v = acc·m; v = v if v > 0 else v·slope; then ``gelu32``."""
    v = mul32(np.asarray(acc, _F32), np.asarray(multiplier, _F32), ftz=ftz)
    v = np.where(v > 0, v, mul32(v, _F32(negative_slope), ftz=ftz))
    return gelu32(v, form, ftz=ftz)
