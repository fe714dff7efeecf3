"""CUDA kernels for the seed ops, their variants, build cache, launch layer and CPU twins.

Imported as ``fpa_kernels`` (the package lives in the repository's kernels/ folder). Building needs
nvcc; running needs a CUDA device; the variants and twins need neither.
"""

from .build import BuildError, build, build_all, build_source, cache_dir, find_nvcc, generated_header
from .launch import conv_params, launch_tiled, run_build, run_variant, tiled_kernel, tiled_kernels, variant_runs
from .twin import all_output_indices, twin, twin_from_terms
from .variants import GeluImpl, Op, Schedule, TensorCore, VariantSpec, tiled_variants, variant_matrix

__all__ = [
    "BuildError",
    "GeluImpl",
    "Op",
    "Schedule",
    "TensorCore",
    "VariantSpec",
    "all_output_indices",
    "build",
    "build_all",
    "build_source",
    "cache_dir",
    "conv_params",
    "find_nvcc",
    "generated_header",
    "launch_tiled",
    "run_build",
    "run_variant",
    "tiled_kernel",
    "tiled_kernels",
    "tiled_variants",
    "twin",
    "twin_from_terms",
    "variant_matrix",
    "variant_runs",
]
