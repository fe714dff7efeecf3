"""The CPU twin of a kernel variant: the same arithmetic, emulated exactly with fp_analysis's core."""

from __future__ import annotations

import numpy as np

from fp_analysis.errors import ParameterError
from fp_analysis.numerics.gelu32 import epilogue32
from fp_analysis.numerics.orders import accumulate
from fp_analysis.ops.conv import ConvSpec
from fp_analysis.ops.terms import Terms, gather_terms, term_permutation

from .variants import Op, VariantSpec

__all__ = ["all_output_indices", "twin", "twin_from_terms"]


def all_output_indices(out_shape: tuple[int, ...], start: int = 0, stop: int | None = None) -> np.ndarray:
    """Coordinates (M, ndim) of the outputs with flat (C-order) positions start … stop−1."""
    stop = int(np.prod(out_shape)) if stop is None else stop
    return np.stack(np.unravel_index(np.arange(start, stop), out_shape), axis=1).astype(np.int64)


def _numpy(t) -> np.ndarray:
    return t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)


def twin_from_terms(
    variant: VariantSpec, spec: ConvSpec, terms: Terms, multiplier=None, negative_slope: float = 0.01
) -> np.ndarray:
    """The variant's fp32 results at the outputs whose terms were gathered (``terms.index`` says which)."""
    if not variant.twinned:
        raise ParameterError(f"variant {variant.label!r} has no bit-exact CPU twin; check it against its bound")
    perm = term_permutation(spec, variant.term_order)
    acc = accumulate(terms.w, terms.x, variant.twin_accumulation(), terms.bias, perm)
    if variant.op is Op.CONV_GELU:
        m = _numpy(multiplier).reshape(-1).astype(np.float32)
        acc = epilogue32(acc, m[terms.index[:, 1]], negative_slope, variant.gelu, ftz=variant.fast_math)
    return acc


def twin(
    variant: VariantSpec,
    spec: ConvSpec,
    x,
    weight,
    bias=None,
    multiplier=None,
    negative_slope: float = 0.01,
    chunk: int = 16384,
) -> np.ndarray:
    """Every output of ``variant`` computed on the CPU, bit for bit what the kernel returns (float32 array).

    Outputs are processed ``chunk`` at a time: each needs its K gathered terms, so memory stays
    O(chunk·K). Raises for variants without a twin (tensor cores, CUDA's own erff/tanhf).
    """
    if not variant.twinned:
        raise ParameterError(f"variant {variant.label!r} has no bit-exact CPU twin; check it against its bound")
    x_np = _numpy(x)
    out_shape = spec.output_shape(tuple(x_np.shape))
    total = int(np.prod(out_shape))
    out = np.empty(total, np.float32)
    for start in range(0, total, chunk):
        index = all_output_indices(out_shape, start, min(start + chunk, total))
        terms = gather_terms(spec, x_np, weight, bias, index)
        out[start : start + terms.M] = twin_from_terms(variant, spec, terms, multiplier, negative_slope)
    return out.reshape(out_shape)
