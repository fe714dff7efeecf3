"""fp_analysis: explain and bound floating-point disagreements between GPU kernels and their references.

The numeric core re-exported here runs on numpy / torch-CPU / mpmath alone: exact fp32 and narrow-format
arithmetic, named accumulation orders, the seed ops as specs, fp64 and mpmath references, error
metrics and bounds. Submodules hold the details; ``fp_analysis.ops`` has the op specs and presets.

The names are imported on first use (PEP 562 module ``__getattr__``): ``import fp_analysis`` itself
costs nothing, so a process that needs one submodule — the CLI's start, the candidate process that only
runs the user's solution — does not pay for torch, numba and the rest of the core.
"""

from __future__ import annotations

from .lazy_exports import lazy_exports as _lazy_exports

# Every public name and the submodule that defines it.
_EXPORTS = {
    "add32": "numerics.arith",
    "fma32": "numerics.arith",
    "mul32": "numerics.arith",
    "DotBound": "numerics.bounds",
    "dot_bound": "numerics.bounds",
    "epilogue_bound": "numerics.bounds",
    "gamma": "numerics.bounds",
    "gamma_tilde": "numerics.bounds",
    "lambda_for_probability": "numerics.bounds",
    "rounding_depth": "numerics.bounds",
    "DtypeError": "errors",
    "ExitCode": "errors",
    "FpaError": "errors",
    "InternalError": "errors",
    "ParameterError": "errors",
    "ShapeError": "errors",
    "UserCodeError": "errors",
    "ExplainOptions": "options",
    "explain_files": "explain.jobs",
    "FORMATS": "numerics.formats",
    "FloatFormat": "numerics.formats",
    "get_format": "numerics.formats",
    "ErrorStats": "numerics.metrics",
    "NonfiniteStats": "numerics.metrics",
    "error_stats": "numerics.metrics",
    "format_mismatch": "numerics.metrics",
    "ulp": "numerics.metrics",
    "AccumulationSpec": "numerics.orders",
    "Combine": "numerics.orders",
    "Contraction": "numerics.orders",
    "OperandRounding": "numerics.orders",
    "Order": "numerics.orders",
    "accumulate": "numerics.orders",
    "SumMethod": "ops.reference",
    "abs_dot_at": "ops.reference",
    "fp64_at": "ops.reference",
    "fp64_full": "ops.reference",
    "mpmath_at": "ops.reference",
    "mpmath_to_float64": "ops.reference",
    "Rounding": "numerics.rounding",
    "flush_subnormals": "numerics.rounding",
    "round_to": "numerics.rounding",
    "CloseOptions": "model.assertion",
    "assert_equivalent": "model.assertion",
    "ops": None,  # the subpackage itself
}

__all__ = [
    "FORMATS",
    "AccumulationSpec",
    "CloseOptions",
    "Combine",
    "Contraction",
    "DotBound",
    "DtypeError",
    "ErrorStats",
    "ExitCode",
    "ExplainOptions",
    "FloatFormat",
    "FpaError",
    "InternalError",
    "NonfiniteStats",
    "OperandRounding",
    "Order",
    "ParameterError",
    "Rounding",
    "ShapeError",
    "SumMethod",
    "UserCodeError",
    "abs_dot_at",
    "accumulate",
    "add32",
    "assert_equivalent",
    "dot_bound",
    "epilogue_bound",
    "error_stats",
    "explain_files",
    "flush_subnormals",
    "fma32",
    "format_mismatch",
    "fp64_at",
    "fp64_full",
    "gamma",
    "gamma_tilde",
    "get_format",
    "lambda_for_probability",
    "mpmath_at",
    "mpmath_to_float64",
    "mul32",
    "ops",
    "round_to",
    "rounding_depth",
    "ulp",
]


__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, globals(), __all__)
