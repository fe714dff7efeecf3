"""References for convolution outputs: fp64 over whole tensors, fp64 and mpmath on sampled outputs.

Three truths of decreasing cost and increasing accuracy:

- ``fp64_full``: the whole output with torch in float64 (CPU or CUDA), chunked to bound memory.
  Its error per output is that of an fp64 dot product of length K in torch's order: at most
  γ_K(fp64) · Σ|w·x| (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., 2002,
  eq. (3.5), γ_n = n·u / (1 − n·u), u = 2^-53), i.e. ~1e-13 relative to Σ|w·x| for K ≈ 1000.
- ``fp64_at``: sampled outputs from their gathered ``Terms``. fp32 × fp32 products are exact in fp64
  (24 + 24 = 48 significand bits ≤ 53, and exponents stay in fp64's normal range), so only the
  summation rounds; with ``SumMethod.FSUM`` the sum is correctly rounded (Python ``math.fsum``,
  Shewchuk 1997 "Adaptive Precision Floating-Point Arithmetic and Fast Robust Geometric Predicates").
- ``mpmath_at``: the same sums exactly in mpmath (no rounding at all), optionally followed by the
  epilogue in mpmath at ``dps`` digits.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from enum import Enum
from typing import Any

import mpmath
import numpy as np
import torch
import torch.nn.functional as F
from mpmath.libmp import from_float, mpf_sum, to_float

from ..errors import DtypeError, ParameterError, ShapeError
from .conv import ConvSpec
from .epilogue import EpilogueSpec, epilogue_mpmath
from .terms import Terms

__all__ = [
    "SumMethod",
    "abs_dot_at",
    "fp64_at",
    "fp64_full",
    "mpmath_at",
    "mpmath_to_float64",
]

_FP64_BYTES = 8
_EPILOGUE_BLOCK = 1 << 16  # elements per GELU call in fp64_full; 512 KiB of fp64


class SumMethod(str, Enum):
    """How ``fp64_at`` adds the exact fp64 products of each output."""

    FSUM = "fsum"
    """Correctly rounded sum (``math.fsum``, Shewchuk 1997): |error| ≤ u·|s|, u = 2^-53. One Python
    call per output (~20 µs for K ≈ 1000), so cheap for thousands of sampled outputs."""

    PAIRWISE = "pairwise"
    """``numpy.sum`` (blocked pairwise): vectorised over outputs; |error| ≤ γ_K(fp64)·Σ|w·x| as for
    any summation order (Higham 2002, eq. (4.4)), in practice far smaller."""


# --------------------------------------------------------------------------------------------------
# fp64 over whole tensors
# --------------------------------------------------------------------------------------------------


def _validated_tensor(name: str, value: Any) -> torch.Tensor:
    if isinstance(value, np.ndarray):
        value = torch.from_numpy(value)
    if not isinstance(value, torch.Tensor):
        raise DtypeError(f"{name} must be a torch.Tensor or numpy.ndarray, got {type(value).__name__}")
    if not value.is_floating_point():
        raise DtypeError(f"{name} must have a floating-point dtype (converted exactly to float64), got {value.dtype}")
    return value.detach()


def _validated_multiplier(spec: ConvSpec, multiplier: Any, name: str = "multiplier") -> torch.Tensor:
    """The module's per-output-channel multiplier, shape (C_out, 1, …, 1) with one 1 per spatial dim."""
    tensor = _validated_tensor(name, multiplier)
    expected = (spec.out_channels,) + (1,) * spec.spatial_dims
    if tuple(tensor.shape) != expected:
        raise ShapeError(
            f"{name} must have shape {list(expected)} (one value per output channel, as the module's "
            f"parameter), got {list(tensor.shape)}"
        )
    return tensor


def _epilogue_requested(epilogue: Any, multiplier: Any) -> bool:
    """Whether an epilogue is asked for; raises unless epilogue and multiplier come together."""
    if epilogue is None:
        if multiplier is not None:
            raise ParameterError("multiplier was given without an epilogue; pass epilogue=EpilogueSpec(...)")
        return False
    if not isinstance(epilogue, EpilogueSpec):
        raise ParameterError(f"epilogue must be an EpilogueSpec or None, got {type(epilogue).__name__}")
    if multiplier is None:
        raise ParameterError("epilogue needs the per-channel multiplier; pass multiplier=(C_out, 1, …, 1) tensor")
    return True


def _validated_epilogue_args(spec: ConvSpec, epilogue: Any, multiplier: Any) -> torch.Tensor | None:
    if not _epilogue_requested(epilogue, multiplier):
        return None
    return _validated_multiplier(spec, multiplier)


def _channel_chunks(spec: ConvSpec, chunk: int) -> list[tuple[int, int, int, int, int]]:
    """Return (o0, o1, c0, c1, groups) per output-channel chunk, each a valid grouped conv by itself.

    A chunk is either a run of whole groups (its input channels are those groups' channels, and it is
    a conv with that many groups) or part of one group (a groups=1 conv over that group's channels),
    so no chunk mixes input channels of different groups.
    """
    cout_g, cin_g = spec.out_channels_per_group, spec.in_channels_per_group
    chunks = []
    if chunk >= cout_g:
        groups_per_chunk = chunk // cout_g
        for g0 in range(0, spec.groups, groups_per_chunk):
            g1 = min(g0 + groups_per_chunk, spec.groups)
            chunks.append((g0 * cout_g, g1 * cout_g, g0 * cin_g, g1 * cin_g, g1 - g0))
    else:
        for g in range(spec.groups):
            for o0 in range(g * cout_g, (g + 1) * cout_g, chunk):
                o1 = min(o0 + chunk, (g + 1) * cout_g)
                chunks.append((o0, o1, g * cin_g, (g + 1) * cin_g, 1))
    return chunks


def _chunk_bytes(spec: ConvSpec, in_spatial: Sequence[int], out_spatial: Sequence[int], out_chunk: int) -> int:
    """Estimated peak extra bytes of one batch item's fp64 conv over ``out_chunk`` output channels.

    Counts the fp64 copy of the input channels read (padded), the im2col buffer of PyTorch's CPU
    fallback for double (``slow_conv2d``/``slow_conv3d``: (C_in/groups)·prod(k) × prod(out) per group
    of the chunk), and twice the output chunk (per-group results are concatenated). An estimate, not
    a measurement: backends differ (cuDNN chooses its own workspace).
    """
    cout_g = spec.out_channels_per_group
    groups_in_chunk = max(1, out_chunk // cout_g) if out_chunk >= cout_g else 1
    cin = spec.in_channels_per_group * groups_in_chunk
    padded = math.prod(s + b + a for s, (b, a) in zip(in_spatial, spec.padding, strict=True))
    out = math.prod(out_spatial)
    columns = spec.K * out * groups_in_chunk
    return _FP64_BYTES * (cin * padded + columns + 2 * out_chunk * out)


def _largest_out_chunk(spec: ConvSpec, in_spatial: Sequence[int], out_spatial: Sequence[int], budget: int) -> int:
    """Largest output-channel chunk (whole groups, or part of one group) whose estimate fits ``budget``.

    Returns 1 when even a single output channel does not fit: spatial chunking is not implemented,
    so the budget is then exceeded rather than the result refused.
    """
    cout_g = spec.out_channels_per_group
    candidates = [j * cout_g for j in range(spec.groups, 0, -1)] + list(range(cout_g - 1, 0, -1))
    for candidate in candidates:
        if _chunk_bytes(spec, in_spatial, out_spatial, candidate) <= budget:
            return candidate
    return 1


def _conv64(spec: ConvSpec, x64: torch.Tensor, w64: torch.Tensor, groups: int) -> torch.Tensor:
    """F.conv2d / F.conv3d in float64 without bias, asymmetric padding applied by an explicit zero pad."""
    conv = F.conv2d if spec.spatial_dims == 2 else F.conv3d
    if spec.is_symmetric_padding:
        padding: tuple[int, ...] = tuple(before for before, _ in spec.padding)
    else:
        # F.pad takes (before, after) pairs starting from the last dim.
        pads = [p for pair in reversed(spec.padding) for p in pair]
        x64 = F.pad(x64, pads)
        padding = (0,) * spec.spatial_dims
    return conv(x64, w64, None, stride=spec.stride, padding=padding, dilation=spec.dilation, groups=groups)


def fp64_full(
    spec: ConvSpec,
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None = None,
    *,
    epilogue: EpilogueSpec | None = None,
    multiplier: torch.Tensor | None = None,
    max_chunk_bytes: int = 256 << 20,
) -> torch.Tensor:
    """Return the whole output (N, C_out, *spatial) in float64, computed on ``x``'s device.

    The operands (any float dtype; conversion to float64 is exact) are converted chunk by chunk:
    over batch items, and over output channels (respecting groups, see ``_channel_chunks``) when one
    batch item's estimate (``_chunk_bytes``) exceeds ``max_chunk_bytes``. Each output is computed by
    the same fp64 conv whatever the chunking, then the bias is added (one more fp64 rounding), so
    the result does not depend on ``max_chunk_bytes``. With ``epilogue``, applies
    gelu(leaky_relu(y · multiplier)) in float64 with torch's ops, as ``epilogue_torch`` does, but to
    fixed blocks of the output (see ``_epilogue_in_place`` for why).
    """
    if not isinstance(spec, ConvSpec):
        raise ParameterError(f"spec must be a ConvSpec, got {type(spec).__name__}")
    if isinstance(max_chunk_bytes, bool) or not isinstance(max_chunk_bytes, int) or max_chunk_bytes < 1:
        raise ParameterError(f"max_chunk_bytes must be a positive integer, got {max_chunk_bytes!r}")
    x = _validated_tensor("x", x)
    weight = _validated_tensor("weight", weight)
    out_shape = spec.output_shape(tuple(x.shape))
    if tuple(weight.shape) != spec.weight_shape:
        raise ShapeError(f"weight must have shape {list(spec.weight_shape)} for this spec, got {list(weight.shape)}")
    if bias is None and spec.bias:
        raise ParameterError("bias is None but spec.bias is True; pass the (out_channels,) bias tensor")
    if bias is not None:
        if not spec.bias:
            raise ParameterError("bias was given but spec.bias is False; pass bias=None")
        bias = _validated_tensor("bias", bias)
        if tuple(bias.shape) != (spec.out_channels,):
            raise ShapeError(f"bias must have shape [{spec.out_channels}], got {list(bias.shape)}")
    m = _validated_epilogue_args(spec, epilogue, multiplier)
    device = x.device
    for name, tensor in (("weight", weight), ("bias", bias), ("multiplier", m)):
        if tensor is not None and tensor.device != device:
            raise ParameterError(f"{name} is on {tensor.device} but x is on {device}; put them on one device")

    out = torch.empty(out_shape, dtype=torch.float64, device=device)
    if out.numel() == 0:
        return out
    in_spatial, out_spatial = tuple(x.shape[2:]), out_shape[2:]
    per_item = _chunk_bytes(spec, in_spatial, out_spatial, spec.out_channels)
    if per_item <= max_chunk_bytes:
        batch_chunk, channel_chunks = max(1, max_chunk_bytes // per_item), _channel_chunks(spec, spec.out_channels)
    else:
        chunk = _largest_out_chunk(spec, in_spatial, out_spatial, max_chunk_bytes)
        batch_chunk, channel_chunks = 1, _channel_chunks(spec, chunk)

    w64 = weight.to(torch.float64)
    b64 = None if bias is None else bias.to(torch.float64)
    m64 = None if m is None else m.to(torch.float64)
    for n0 in range(0, out_shape[0], batch_chunk):
        n1 = min(n0 + batch_chunk, out_shape[0])
        for o0, o1, c0, c1, groups in channel_chunks:
            x64 = x[n0:n1, c0:c1].to(torch.float64)
            y = _conv64(spec, x64, w64[o0:o1], groups)
            if b64 is not None:
                # Added after the conv, not passed to it: ATen's CPU fp64 conv folds the bias into its
                # GEMM at a place that depends on the chunk's shape (seen with one output channel),
                # which would make the result depend on max_chunk_bytes.
                y = y + b64[o0:o1].reshape(-1, *([1] * spec.spatial_dims))
            out[n0:n1, o0:o1] = y
    if m64 is not None:
        _epilogue_in_place(out, m64, epilogue)
    return out


def _epilogue_in_place(out: torch.Tensor, m64: torch.Tensor, epilogue: EpilogueSpec) -> None:
    """Apply gelu(leaky_relu(out · m)) in place, in fixed blocks of the flat output.

    Multiplication and LeakyReLU are single correctly rounded operations, so they are applied to the
    whole tensor in place. GELU is not: torch's CPU kernel evaluates erf/tanh with a vectorised
    (SLEEF) routine for the body of each contiguous range and a scalar libm routine for its tail,
    which differ in the last bit, so an element's result depends on where the range it sits in
    starts and ends. Fixed blocks of ``_EPILOGUE_BLOCK`` elements make the result independent of
    ``max_chunk_bytes`` (it can still change with the number of intra-op threads).
    """
    out.mul_(m64)
    F.leaky_relu_(out, epilogue.negative_slope)
    flat = out.view(-1)
    for start in range(0, flat.numel(), _EPILOGUE_BLOCK):
        block = flat[start : start + _EPILOGUE_BLOCK]
        block.copy_(F.gelu(block, approximate=epilogue.approximate.value))


# --------------------------------------------------------------------------------------------------
# Sampled outputs from Terms
# --------------------------------------------------------------------------------------------------


def _validated_terms(terms: Any) -> Terms:
    if not isinstance(terms, Terms):
        raise ParameterError(
            f"terms must be a Terms (from fp_analysis.ops.terms.gather_terms), got {type(terms).__name__}"
        )
    return terms


def _exact_products(terms: Terms) -> np.ndarray:
    """w·x per term in float64: exact, since an fp32×fp32 product needs 48 significand bits."""
    return terms.w.astype(np.float64) * terms.x.astype(np.float64)


def fp64_at(terms: Terms, method: SumMethod | str = SumMethod.FSUM) -> np.ndarray:
    """Return Σ_k w·x (+ bias) per sampled output as float64 (M,).

    Products are exact in fp64; the only rounding is the summation: correctly rounded with
    ``SumMethod.FSUM`` (the default), ≤ γ_{K+1}(fp64)·(Σ|w·x| + |bias|) with ``SumMethod.PAIRWISE``
    (Higham 2002, eq. (4.4)).
    """
    terms = _validated_terms(terms)
    try:
        method = SumMethod(method)
    except ValueError:
        allowed = ", ".join(repr(m.value) for m in SumMethod)
        raise ParameterError(f"method must be one of {allowed}; got {method!r}") from None
    products = _exact_products(terms)
    if method is SumMethod.PAIRWISE:
        total = products.sum(axis=1)
        return total if terms.bias is None else total + terms.bias.astype(np.float64)
    if terms.bias is not None:
        products = np.concatenate([products, terms.bias.astype(np.float64)[:, None]], axis=1)
    return _row_fsums(products)


def abs_dot_at(terms: Terms) -> np.ndarray:
    """Return an fp64 upper bound of Σ_k |w|·|x| (+ |bias|) per sampled output, (M,), at most 1 ulp high.

    The scale of componentwise error bounds |ŝ − s| ≤ γ_n·Σ|w·x| (Higham 2002, eq. (3.5)). The
    products are exact; ``math.fsum`` rounds their sum to nearest (Shewchuk 1997), and one step
    toward +∞ makes the result never smaller than the exact sum, so bounds built on it stay bounds.
    """
    terms = _validated_terms(terms)
    magnitudes = np.abs(_exact_products(terms))
    if terms.bias is not None:
        magnitudes = np.concatenate([magnitudes, np.abs(terms.bias.astype(np.float64))[:, None]], axis=1)
    nearest = _row_fsums(magnitudes)
    return np.nextafter(nearest, np.inf)


def _row_fsums(values: np.ndarray) -> np.ndarray:
    """math.fsum of each row: one Python call per output, ~20 µs for K ≈ 1000."""
    return np.fromiter((math.fsum(row) for row in values), dtype=np.float64, count=values.shape[0])


def _validated_dps(dps: Any) -> int:
    if isinstance(dps, bool) or not isinstance(dps, (int, np.integer)) or dps < 17:
        raise ParameterError(f"dps must be an integer >= 17 (decimal digits; fp64 needs 17), got {dps!r}")
    return int(dps)


def mpmath_at(
    terms: Terms,
    dps: int = 50,
    epilogue: EpilogueSpec | None = None,
    multiplier: Any = None,
) -> list[mpmath.mpf]:
    """Return each sampled output as an mpf: the exact Σ w·x (+ bias), optionally through the epilogue.

    The sum is exact, not rounded to ``dps``: the exact fp64 products are added by mpmath's
    ``mpf_sum`` with no precision limit (an mpf holds as many bits as the sum needs, at most the
    ~560-bit span of fp32 products). So converting it with ``mpmath_to_float64`` rounds once, and a
    correctly rounded fp64 sum must equal it bit for bit; rounding first to ``dps`` digits would
    double-round sums that land on an fp64 tie. ``dps`` is the precision of the epilogue, whose
    erf/tanh values are not finite binary fractions. ``multiplier`` is the module's per-channel
    parameter, shape (C_out, 1, …, 1), indexed by each output's channel.
    """
    terms = _validated_terms(terms)
    dps = _validated_dps(dps)
    m_values = _multiplier_values(terms, epilogue, multiplier)
    products = _exact_products(terms)
    if terms.bias is not None:
        products = np.concatenate([products, terms.bias.astype(np.float64)[:, None]], axis=1)
    values = [_exact_sum(row.tolist()) for row in products]
    if m_values is None:
        return values
    return epilogue_mpmath(values, m_values, epilogue, dps)


def _exact_sum(addends: list[float]) -> mpmath.mpf:
    """The exact sum of floats as an mpf (``mpf_sum`` with prec=0 does not round)."""
    return mpmath.mp.make_mpf(mpf_sum([from_float(a) for a in addends], 0))


def _multiplier_values(terms: Terms, epilogue: Any, multiplier: Any) -> list[float] | None:
    """The multiplier of each sampled output's channel, as exact Python floats (or None)."""
    if not _epilogue_requested(epilogue, multiplier):
        return None
    m = _validated_tensor("multiplier", multiplier)
    spatial_dims = terms.index.shape[1] - 2
    if m.ndim != 1 + spatial_dims or any(s != 1 for s in m.shape[1:]):
        raise ShapeError(
            f"multiplier must have shape [C_out{', 1' * spatial_dims}] (the module's parameter), got {list(m.shape)}"
        )
    channels = terms.index[:, 1]
    if channels.size and channels.max() >= m.shape[0]:
        raise ShapeError(
            f"multiplier has {m.shape[0]} channels but terms reference output channel {int(channels.max())}"
        )
    flat = m.reshape(-1).to(torch.float64).cpu().numpy()
    return flat[channels].tolist()


def mpmath_to_float64(values: Iterable[Any]) -> np.ndarray:
    """Return mpf values rounded to nearest float64 (ties to even), as a float64 array."""
    out = []
    for value in values:
        mpf_value = mpmath.mpf(value) if not isinstance(value, mpmath.mpf) else value
        out.append(to_float(mpf_value._mpf_, rnd="n"))
    return np.asarray(out, dtype=np.float64)
