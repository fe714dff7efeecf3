"""Rounding of fp32/fp64 values to a narrower binary format, exactly, under a chosen rounding mode.

The algorithm works in float64, where every step is exact for the formats in the table: the value is
scaled by a power of two so that the target format's quantum (the spacing of its numbers at that
magnitude, IEEE 754-2019 §3.3) becomes 1, the integer part is rounded by the chosen rule, and the result
is scaled back. Scaling by powers of two and ``trunc`` are exact in binary floating point (Muller et al.,
*Handbook of Floating-Point Arithmetic*, 2nd ed. 2018, §2.2), and so is ``s - trunc(s)`` (Sterbenz's
lemma, ibid. Lemma 4.1), so no double rounding can occur.
"""

from __future__ import annotations

from enum import Enum

import numpy as np

from ..errors import DtypeError, ParameterError, enum_member
from .formats import FORMATS, FloatFormat, get_format

__all__ = ["Rounding", "flush_subnormals", "round_to"]


class Rounding(str, Enum):
    """IEEE 754-2019 §4.3 rounding-direction attributes used by the toolkit."""

    RNE = "rne"
    """Round to nearest, ties to even: IEEE's default, and what tensor cores do for fp32→TF32."""
    RNA = "rna"
    """Round to nearest, ties away from zero (roundTiesToAway)."""
    RZ = "rz"
    """Round toward zero (truncation of the extra significand bits)."""


_ROUNDABLE = ("fp32", "tf32", "bf16", "fp16")
_FP32 = FORMATS["fp32"]


def _check_rounding(rounding: str | Rounding) -> Rounding:
    return enum_member(Rounding, rounding, "rounding")


def _check_target(fmt: str | FloatFormat) -> FloatFormat:
    target = get_format(fmt)
    if target.name not in _ROUNDABLE:
        allowed = ", ".join(repr(n) for n in _ROUNDABLE)
        raise ParameterError(f"Got fmt={target.name!r}, but round_to only rounds to {allowed}.")
    return target


def _pow2(exponent: np.ndarray) -> np.ndarray:
    """2.0**exponent for integer exponents in the float64 normal range, built from bits (exact)."""
    return ((exponent.astype(np.int64) + 1023) << 52).view(np.float64)


def _round_float64(x: np.ndarray, target: FloatFormat, rounding: Rounding) -> np.ndarray:
    """Round float64 values to ``target``; returns float64 holding values of the target format."""
    finite_nonzero = np.isfinite(x) & (x != 0)
    v = np.where(finite_nonzero, x, 1.0)  # placeholder keeps frexp/ldexp in range; masked out below
    _, e = np.frexp(v)  # v = m·2^e with 0.5 ≤ |m| < 1, so the normal exponent is e - 1
    quantum_exp = np.maximum(e - 1, target.emin) - (target.precision - 1)
    scaled = v * _pow2(-quantum_exp)  # exact: only the exponent changes
    whole = np.trunc(scaled)
    frac = np.abs(scaled - whole)  # exact (Sterbenz)
    if rounding is Rounding.RZ:
        up = np.zeros(v.shape, dtype=bool)
    elif rounding is Rounding.RNA:
        up = frac >= 0.5
    else:  # RNE: above the midpoint, or on it with an odd integer part
        up = (frac > 0.5) | ((frac == 0.5) & (np.fmod(whole, 2.0) != 0))
    magnitude = np.abs(whole) + up
    rounded = np.copysign(magnitude, v) * _pow2(quantum_exp)  # exact, may overflow to inf beyond fp64
    overflow = np.abs(rounded) > target.max_finite
    if rounding is Rounding.RZ:
        # IEEE 754-2019 §7.4: toward zero, an overflow delivers the largest finite number.
        rounded = np.where(overflow, np.copysign(target.max_finite, v), rounded)
    else:
        rounded = np.where(overflow, np.copysign(np.inf, v), rounded)
    # Zero results keep the sign of x (IEEE 754-2019 §6.3); ±0, ±inf and NaN pass through unchanged.
    rounded = np.copysign(rounded, v)
    return np.where(finite_nonzero, rounded, x)


def _round_fp32_bits(x: np.ndarray, target: FloatFormat, rounding: Rounding) -> np.ndarray:
    """Round float32 values to a format with fp32's exponent range (TF32, bf16) on the bit pattern.

    Such a format's numbers are the fp32 numbers whose low 24 − p significand bits are zero, in the
    subnormal range too, so rounding is integer arithmetic on the encoding: add half a quantum (less one,
    plus the kept last bit, for ties to even) and clear the dropped bits; a carry moves into the exponent
    exactly as a rounding up to the next binade or to infinity should (Muller et al. 2018, §3.1.1 on
    the monotone ordering of IEEE encodings).
    """
    drop = _FP32.precision - target.precision
    bits = x.view(np.uint32)
    if rounding is Rounding.RNE:
        bits = bits + np.uint32((1 << (drop - 1)) - 1) + ((bits >> np.uint32(drop)) & np.uint32(1))
    elif rounding is Rounding.RNA:
        bits = bits + np.uint32(1 << (drop - 1))
    rounded = (bits & np.uint32(0xFFFFFFFF ^ ((1 << drop) - 1))).view(np.float32)
    # The largest finite value rounds up into inf's encoding, as it should; only NaN payloads must be kept.
    return np.where(np.isnan(x), x, rounded)


def round_to(x, fmt: str | FloatFormat, rounding: str | Rounding = "rne"):
    """Return ``x`` rounded to the format ``fmt``, as the same type (numpy array or torch tensor) and dtype.

    Parameters
    ----------
    x : numpy array or torch tensor of float32 or float64 (any device: a GPU tensor of float32 is rounded on
        its device where the rounding is on the encoding or torch's own (``_round_on_device``), other GPU
        tensors on the CPU, and returned on their device), or a scalar (numpy float32/float64, Python float),
        for which a numpy scalar of the same precision is returned.
    fmt : "fp32", "tf32", "bf16" or "fp16".
    rounding : "rne" (nearest, ties to even), "rna" (nearest, ties away) or "rz" (toward zero).

    Subnormals of the target format are kept (gradual underflow); overflow gives ±inf for rne/rna and
    ±max_finite for rz; ±0, ±inf and NaN are returned as they are (IEEE 754-2019 §4.3, §7.4).
    Rounding float32 input to "fp32" is the identity.
    """
    target = _check_target(fmt)
    mode = _check_rounding(rounding)
    torch_tensor = _is_torch_tensor(x)
    if torch_tensor:
        _check_torch_dtype(x)
        on_device = _round_on_device(x, target, mode) if x.device.type != "cpu" else None
        if on_device is not None:
            return on_device
        array = x.detach().to("cpu").contiguous().numpy()
    elif isinstance(x, np.ndarray) or isinstance(x, (float, np.floating)):
        array = np.asarray(x)  # a Python float is a float64 scalar
    else:
        raise DtypeError(f"round_to takes a numpy array or a torch tensor for x, got {type(x).__name__}.")
    if array.dtype not in (np.float32, np.float64):
        raise DtypeError(f"round_to takes float32 or float64 values for x, got dtype {array.dtype}.")
    with np.errstate(invalid="ignore", over="ignore"):
        if array.dtype == np.float32 and target is _FP32:
            result = array.copy()
        elif array.dtype == np.float32 and (target.emin, target.emax) == (_FP32.emin, _FP32.emax):
            # ascontiguousarray makes a 0-d array 1-d; the reshape gives a scalar its shape back
            result = _round_fp32_bits(np.ascontiguousarray(array), target, mode).reshape(array.shape)
        elif target.name == "fp16" and mode is Rounding.RNE:
            # numpy's own conversion rounds to nearest even, gradual underflow and overflow included;
            # the tests hold it to the rational reference like every other path. It quiets a NaN and cuts its
            # payload: NaNs are kept as they came, as on every other path.
            result = np.where(np.isnan(array), array, array.astype(np.float16).astype(array.dtype))
        else:
            result = _round_float64(array.astype(np.float64), target, mode).astype(array.dtype)
    if torch_tensor:
        import torch

        return torch.from_numpy(result).to(x.device)
    return result if isinstance(x, np.ndarray) else result[()]


def flush_subnormals(x: np.ndarray, fmt: str | FloatFormat = "fp32") -> np.ndarray:
    """Return ``x`` with values below the smallest normal of ``fmt`` replaced by a zero of the same sign.

    This is flush-to-zero as CUDA's ``-ftz=true`` (implied by ``--use_fast_math``) applies it to fp32
    operands and results (CUDA C++ Programming Guide, "Floating-Point Standard"; PTX ISA, ``.ftz``).
    """
    target = get_format(fmt)
    tiny = np.abs(x) < target.smallest_normal
    flushed = np.where(tiny, np.copysign(np.zeros_like(x), x), x)
    return flushed if isinstance(x, np.ndarray) else flushed[()]  # a scalar in, a scalar out


def _is_torch_tensor(x) -> bool:
    torch = _torch_if_loaded()
    return torch is not None and isinstance(x, torch.Tensor)


def _torch_if_loaded():
    import sys

    return sys.modules.get("torch")


def _check_torch_dtype(t) -> None:
    import torch

    if t.dtype not in (torch.float32, torch.float64):
        raise DtypeError(f"round_to takes float32 or float64 values for x, got dtype {t.dtype}.")


def _round_on_device(t, target: FloatFormat, rounding: Rounding):
    """``round_to`` of a float32 tensor on its own device (a GPU), without the copy to the host and back (0.8 s
    of the full-size seed-000 analysis on the H200), or None where it is not done there (float64 input, fp16
    other than to nearest even): the same arithmetic as the numpy paths, so the same bits.

    To TF32 or bf16 it is ``_round_fp32_bits``' integer arithmetic on the encoding, in int64 (torch has no
    unsigned 32-bit arithmetic; the mask keeps the low 32 bits, as uint32 wrap-around would). To fp16 it is
    torch's own conversion, which rounds to nearest even with gradual underflow and overflow to ±inf, as
    numpy's does (IEEE 754-2019 §4.3, §7.4; the GPU tests compare the two bitwise).
    """
    import torch

    if t.dtype != torch.float32:
        return None
    with torch.no_grad():
        x = t.detach()
        if target is _FP32:
            return x.clone()
        if target.name == "fp16":  # NaNs kept as they came (the conversion quiets them), as on the CPU
            return torch.where(torch.isnan(x), x, x.to(torch.float16).float()) if rounding is Rounding.RNE else None
        if (target.emin, target.emax) != (_FP32.emin, _FP32.emax):
            return None
        drop = _FP32.precision - target.precision
        bits = x.contiguous().view(torch.int32).to(torch.int64) & 0xFFFFFFFF
        if rounding is Rounding.RNE:
            bits += ((1 << (drop - 1)) - 1) + ((bits >> drop) & 1)
        elif rounding is Rounding.RNA:
            bits += 1 << (drop - 1)
        bits &= 0xFFFFFFFF ^ ((1 << drop) - 1)
        bits = torch.where(bits >= 1 << 31, bits - (1 << 32), bits).to(torch.int32)  # back to the signed encoding
        return torch.where(torch.isnan(x), x, bits.view(torch.float32).view(x.shape))
