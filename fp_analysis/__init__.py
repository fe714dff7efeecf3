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
    "add32": "arith",
    "fma32": "arith",
    "mul32": "arith",
    "DotBound": "bounds",
    "dot_bound": "bounds",
    "epilogue_bound": "bounds",
    "gamma": "bounds",
    "gamma_tilde": "bounds",
    "lambda_for_probability": "bounds",
    "rounding_depth": "bounds",
    "DtypeError": "errors",
    "ExitCode": "errors",
    "FpaError": "errors",
    "InternalError": "errors",
    "ParameterError": "errors",
    "ShapeError": "errors",
    "UserCodeError": "errors",
    "FORMATS": "formats",
    "FloatFormat": "formats",
    "get_format": "formats",
    "ErrorStats": "metrics",
    "NonfiniteStats": "metrics",
    "error_stats": "metrics",
    "format_mismatch": "metrics",
    "ulp": "metrics",
    "AccumulationSpec": "orders",
    "Combine": "orders",
    "Contraction": "orders",
    "OperandRounding": "orders",
    "Order": "orders",
    "accumulate": "orders",
    "SumMethod": "reference",
    "abs_dot_at": "reference",
    "fp64_at": "reference",
    "fp64_full": "reference",
    "mpmath_at": "reference",
    "mpmath_to_float64": "reference",
    "Rounding": "rounding",
    "flush_subnormals": "rounding",
    "round_to": "rounding",
    "assert_equivalent": "testing",
    "ops": None,  # the subpackage itself
}

__all__ = [
    "FORMATS",
    "AccumulationSpec",
    "Combine",
    "Contraction",
    "DotBound",
    "DtypeError",
    "ErrorStats",
    "ExitCode",
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
