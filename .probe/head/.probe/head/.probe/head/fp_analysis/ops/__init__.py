"""The seed ops as specs: convolution parameters and shapes, their terms, epilogue, modules, presets.

The names are imported on first use (``fp_analysis.lazy_exports``): ``fp_analysis.ops.conv`` alone does not bring
the epilogue's numba and mpmath."""

from __future__ import annotations

from ..lazy_exports import lazy_exports as _lazy_exports

_EXPORTS = {  # name → the submodule defining it; None: the name is a submodule
    "conv": None,
    "epilogue": None,
    "modules": None,
    "presets": None,
    "terms": None,
    "ConvSpec": "conv",
    "conv2d_spec": "conv",
    "conv3d_kk1_spec": "conv",
    "TermOrder": "terms",
    "Terms": "terms",
    "gather_terms": "terms",
    "require_terms_memory": "terms",
    "sample_output_indices": "terms",
    "term_permutation": "terms",
    "EpilogueSpec": "epilogue",
    "Extremum": "epilogue",
    "GeluForm": "epilogue",
    "epilogue_mpmath": "epilogue",
    "epilogue_torch": "epilogue",
    "gelu_derivative_extremum": "epilogue",
    "gelu_derivative_max": "epilogue",
    "gelu_tanh_vs_erf_extremum": "epilogue",
    "gelu_tanh_vs_erf_max": "epilogue",
    "ConvMultLeakyGelu": "modules",
    "reference_module": "modules",
    "torch_padding_arg": "modules",
    "PRESETS": "presets",
    "Preset": "presets",
    "Problem": "presets",
    "make_problem": "presets",
    "require_sample_memory": "presets",
    "resolve_input_shape": "presets",
}

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

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, globals(), __all__)
