"""The table of binary floating-point formats the toolkit reasons about.

Every constant is written exactly (hex literals or exact powers of two) and built once into
``FORMATS``; nothing is recomputed per call. Definitions follow IEEE 754-2019 §3.3 (precision p counts
the implicit bit; normal numbers are m·2^e with 1 ≤ m < 2, emin ≤ e ≤ emax) and Higham, *Accuracy and
Stability of Numerical Algorithms*, 2nd ed. (2002), §2.1 (unit roundoff u = 2^-p for round to nearest).
TF32 is NVIDIA's tensor-core format: fp32's 8-bit exponent with a 10-bit stored fraction
(NVIDIA A100 Tensor Core GPU Architecture whitepaper, 2020, "TF32").
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ParameterError

__all__ = ["FORMATS", "FloatFormat", "get_format"]


@dataclass(frozen=True)
class FloatFormat:
    """One binary format: its precision, exponent range and the exact constants they imply."""

    name: str
    precision: int  # p, significand bits including the implicit leading bit
    emin: int  # exponent of the smallest normal number
    emax: int  # exponent of the largest finite number
    unit_roundoff: float  # u = 2^-p: bound on relative error of round-to-nearest
    eps: float  # machine epsilon 2^(1-p): spacing of the numbers in [1, 2)
    max_finite: float  # (2 - 2^(1-p)) · 2^emax
    smallest_normal: float  # 2^emin
    smallest_subnormal: float  # 2^(emin - p + 1)
    has_subnormals: bool = True

    @property
    def quantum_exponent_min(self) -> int:
        """Exponent of the smallest subnormal: the finest spacing the format has."""
        return self.emin - self.precision + 1


_FORMAT_LIST = (
    FloatFormat(
        name="fp64",
        precision=53,
        emin=-1022,
        emax=1023,
        unit_roundoff=float.fromhex("0x1p-53"),  # 1.1e-16
        eps=float.fromhex("0x1p-52"),
        max_finite=float.fromhex("0x1.fffffffffffffp+1023"),
        smallest_normal=float.fromhex("0x1p-1022"),
        smallest_subnormal=float.fromhex("0x1p-1074"),
    ),
    FloatFormat(
        name="fp32",
        precision=24,
        emin=-126,
        emax=127,
        unit_roundoff=float.fromhex("0x1p-24"),  # 6.0e-8
        eps=float.fromhex("0x1p-23"),
        max_finite=float.fromhex("0x1.fffffep+127"),  # 3.4e38
        smallest_normal=float.fromhex("0x1p-126"),
        smallest_subnormal=float.fromhex("0x1p-149"),
    ),
    FloatFormat(
        name="tf32",
        precision=11,
        emin=-126,
        emax=127,
        unit_roundoff=float.fromhex("0x1p-11"),  # 4.9e-4
        eps=float.fromhex("0x1p-10"),
        max_finite=float.fromhex("0x1.ffcp+127"),
        smallest_normal=float.fromhex("0x1p-126"),
        smallest_subnormal=float.fromhex("0x1p-136"),
    ),
    FloatFormat(
        name="bf16",
        precision=8,
        emin=-126,
        emax=127,
        unit_roundoff=float.fromhex("0x1p-8"),  # 3.9e-3
        eps=float.fromhex("0x1p-7"),
        max_finite=float.fromhex("0x1.fep+127"),
        smallest_normal=float.fromhex("0x1p-126"),
        smallest_subnormal=float.fromhex("0x1p-133"),
    ),
    FloatFormat(
        name="fp16",
        precision=11,
        emin=-14,
        emax=15,
        unit_roundoff=float.fromhex("0x1p-11"),  # 4.9e-4
        eps=float.fromhex("0x1p-10"),
        max_finite=float.fromhex("0x1.ffcp+15"),  # 65504
        smallest_normal=float.fromhex("0x1p-14"),
        smallest_subnormal=float.fromhex("0x1p-24"),
    ),
)

FORMATS: dict[str, FloatFormat] = {f.name: f for f in _FORMAT_LIST}


def get_format(name: str | FloatFormat, *, parameter: str = "fmt") -> FloatFormat:
    """Return the format named ``name`` (or ``name`` itself), with a clear error for unknown names."""
    if isinstance(name, FloatFormat):
        return name
    try:
        return FORMATS[name]
    except (KeyError, TypeError):
        allowed = ", ".join(repr(n) for n in FORMATS)
        raise ParameterError(f"Got {parameter}={name!r}, but the only valid formats are {allowed}.") from None
