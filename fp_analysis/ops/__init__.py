"""The seed ops as specs: convolution parameters and shapes, term gathering, epilogue, modules, presets."""

from __future__ import annotations

from .conv import (
    ConvSpec,
    TermOrder,
    Terms,
    conv2d_spec,
    conv3d_kk1_spec,
    gather_terms,
    require_terms_memory,
    sample_output_indices,
    term_permutation,
)
from .epilogue import (
    EpilogueSpec,
    Extremum,
    GeluForm,
    epilogue_mpmath,
    epilogue_torch,
    gelu_derivative_extremum,
    gelu_derivative_max,
    gelu_tanh_vs_erf_extremum,
    gelu_tanh_vs_erf_max,
)
from .modules import ConvMultLeakyGelu, reference_module, torch_padding_arg
from .presets import PRESETS, Preset, Problem, make_problem, require_sample_memory, resolve_input_shape

__all__ = [
    "PRESETS",
    "ConvMultLeakyGelu",
    "ConvSpec",
    "EpilogueSpec",
    "Extremum",
    "GeluForm",
    "Preset",
    "Problem",
    "TermOrder",
    "Terms",
    "conv2d_spec",
    "conv3d_kk1_spec",
    "epilogue_mpmath",
    "epilogue_torch",
    "gather_terms",
    "gelu_derivative_extremum",
    "gelu_derivative_max",
    "gelu_tanh_vs_erf_extremum",
    "gelu_tanh_vs_erf_max",
    "make_problem",
    "reference_module",
    "require_sample_memory",
    "require_terms_memory",
    "resolve_input_shape",
    "sample_output_indices",
    "term_permutation",
    "torch_padding_arg",
]
