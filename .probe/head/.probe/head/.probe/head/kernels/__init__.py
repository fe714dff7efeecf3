"""CUDA kernels for the seed ops, their variants, registry, build cache, launch layer and CPU twins.

Imported as ``fpa_kernels`` (the package lives in the repository's kernels/ folder). Building needs
nvcc; running needs a CUDA device; the variants and twins need neither.
"""

from .build import BuildError, build_source, cache_dir, find_nvcc, generated_header
from .call import ConvCall
from .launch import conv_params, run_call, run_variant, tiled_kernel, tiled_kernels, variant_runs
from .registry import KERNELS, Build, Kernel, build_all, general_kernel, kernels_for, variant_build
from .twin import all_output_indices, twin, twin_from_terms
from .variants import (
    GeluImpl,
    Op,
    Schedule,
    TensorCore,
    VariantBound,
    VariantSpec,
    tiled_variants,
    variant_bound,
    variant_matrix,
)

__all__ = [
    "KERNELS",
    "Build",
    "BuildError",
    "ConvCall",
    "GeluImpl",
    "Kernel",
    "Op",
    "Schedule",
    "TensorCore",
    "VariantBound",
    "VariantSpec",
    "all_output_indices",
    "build_all",
    "build_source",
    "cache_dir",
    "conv_params",
    "find_nvcc",
    "general_kernel",
    "generated_header",
    "kernels_for",
    "run_call",
    "run_variant",
    "tiled_kernel",
    "tiled_kernels",
    "tiled_variants",
    "twin",
    "twin_from_terms",
    "variant_bound",
    "variant_build",
    "variant_matrix",
    "variant_runs",
]
