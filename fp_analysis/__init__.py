"""fp_analysis: explain and bound floating-point disagreements between GPU kernels and their references.

The numeric core re-exported here runs on numpy / torch-CPU / mpmath alone: exact fp32 and narrow-format
arithmetic, named accumulation orders, the seed ops as specs, fp64 and mpmath references, error
metrics and bounds. Submodules hold the details; ``fp_analysis.ops`` has the op specs and presets.
"""

from __future__ import annotations

from . import ops
from .arith import add32, fma32, mul32
from .bounds import DotBound, dot_bound, epilogue_bound, gamma, gamma_tilde, lambda_for_probability, rounding_depth
from .errors import DtypeError, ExitCode, FpaError, InternalError, ParameterError, ShapeError, UserCodeError
from .formats import FORMATS, FloatFormat, get_format
from .metrics import ErrorStats, NonfiniteStats, error_stats, format_mismatch, ulp
from .orders import AccumulationSpec, Combine, Contraction, OperandRounding, Order, accumulate
from .reference import SumMethod, abs_dot_at, fp64_at, fp64_full, mpmath_at, mpmath_to_float64
from .rounding import Rounding, flush_subnormals, round_to
from .testing import assert_equivalent

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
