"""The tiled kernels on a GPU: the fast fp64 reference equals torch's fp64 to fp64 rounding, and every tiled
kernel equals its twin or meets the tensor-core bound.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from fpa_kernels import (
    Op,
    tiled_variants,
)
from fpa_kernels.reference import conv_fp64

from fp_analysis.numerics.bounds import gamma
from fp_analysis.ops.terms import gather_terms

from ..tiled_cases import CASES


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (torch.cuda.is_available() is false)")
@pytest.mark.parametrize(("spec", "shape"), CASES)
def test_fast_fp64_reference_equals_torch_fp64_to_fp64_rounding(spec, shape):
    """|conv_fp64 − torch's fp64 conv| ≤ both sides' γ_(K+1) in double times Σ|w·x| + |b| (Higham 2002, §3.1)."""
    from fpa_kernels import all_output_indices

    from fp_analysis.ops.reference import fp64_full

    gen = torch.Generator().manual_seed(3)
    x, w = torch.randn(shape, generator=gen), torch.randn(spec.weight_shape, generator=gen)
    b = torch.randn(spec.out_channels, generator=gen) if spec.bias else None
    cuda = [t.cuda() if t is not None else None for t in (x, w, b)]
    ours = conv_fp64(spec, *cuda).cpu().numpy().reshape(-1)
    theirs = fp64_full(spec, *cuda).cpu().numpy().reshape(-1)
    terms = gather_terms(spec, x, w, b, all_output_indices(spec.output_shape(shape)))
    magnitude = np.abs(terms.w.astype(np.float64) * terms.x).sum(axis=1)
    if terms.bias is not None:
        magnitude += np.abs(terms.bias.astype(np.float64))
    assert np.all(np.abs(ours - theirs) <= 2 * gamma(spec.K + 1, 2.0**-53) * magnitude)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (torch.cuda.is_available() is false)")
@pytest.mark.parametrize(("spec", "shape"), CASES)
def test_every_tiled_kernel_equals_the_twin_or_meets_the_tensor_core_bound(spec, shape):
    """Each kernel that takes a tiled variant (conv_rows and conv_tiled; conv_wgmma and conv_mma_tiled):
    twinned variants bit for bit their twin, tensor-core ones within tensor_core_bound of fp64."""
    from fpa_kernels import all_output_indices, run_variant, twin_from_terms, variant_bound, variant_runs

    from fp_analysis.numerics.bounds import term_sums

    gen = torch.Generator().manual_seed(5)
    x, w = torch.randn(shape, generator=gen), torch.randn(spec.weight_shape, generator=gen) / 8
    b = torch.randn(spec.out_channels, generator=gen) if spec.bias else None
    cuda = [t.cuda() if t is not None else None for t in (x, w, b)]
    terms = gather_terms(spec, x, w, b, all_output_indices(spec.output_shape(shape)))
    exact = (terms.w.astype(np.float64) * terms.x).sum(axis=1) + (terms.bias if terms.bias is not None else 0.0)
    sums = term_sums(terms.w, terms.x, terms.bias)
    op = Op.CONV3D_KK1 if spec.spatial_dims == 3 else Op.CONV2D
    kernels = set()
    for label, variant, kernel in variant_runs(tiled_variants(op), spec, shape):
        kernels.add(kernel)
        got = run_variant(variant, spec, *cuda, kernel=kernel).cpu().numpy().reshape(-1)
        if variant.twinned:
            expected = twin_from_terms(variant, spec, terms)
            assert np.array_equal(got.view(np.uint32), expected.view(np.uint32)), label
        else:
            bound = variant_bound(variant, sums).deterministic
            assert np.all(np.abs(got - exact) <= bound), label
    if spec.stride[1:] == (1,) * (spec.spatial_dims - 1) and spec.padding[2:] in ((), ((0, 0),)):
        assert "conv_rows" in kernels
