"""Principled tolerances: atol from the error bounds of both sides' arithmetic, for all outputs at once.

For a check |candidate − reference| ≤ atol the bound is the sum of the two sides' errors against the
exact result. Each side's probabilistic bound (Higham & Mary 2019, ``bounds.bound_from_sums``) is taken
with λ chosen so that it holds for every one of the ``numel`` outputs simultaneously with probability
0.99 (a union bound: per-output probability 1 − 0.01/numel). rtol is 0: a conv's rounding error scales
with Σ|w·x|, not with |y|, which cancellation can make arbitrarily small.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError
from ..numerics.bounds import TermSums, bound_from_sums, epilogue_bound
from ..numerics.orders import AccumulationSpec, Contraction, OperandRounding
from ..ops.epilogue import EpilogueSpec
from ..options import PrecisionMode

__all__ = ["ARITHMETIC", "side_bound", "tolerance_from_bounds"]

# Each precision mode (``options.PrecisionMode``, the one vocabulary of modes) as the operand rounding of its
# linear ops.
ARITHMETIC = {
    PrecisionMode.FP32.value: OperandRounding.NONE,
    PrecisionMode.TF32.value: OperandRounding.TF32,
    PrecisionMode.BF16.value: OperandRounding.BF16,
    PrecisionMode.FP16.value: OperandRounding.FP16,
}


def side_bound(
    sums: TermSums,
    arithmetic: str,
    numel: int,
    *,
    truth: np.ndarray | None = None,
    multiplier: np.ndarray | None = None,
    epilogue: EpilogueSpec | None = None,
) -> np.ndarray:
    """Per-output probabilistic bound of one side: operands in ``arithmetic`` (fp32/tf32/bf16/fp16), fp32
    accumulation, and the epilogue's propagation (``bounds.epilogue_bound``) when there is one."""
    if arithmetic not in ARITHMETIC:
        allowed = ", ".join(repr(a) for a in ARITHMETIC)
        raise ParameterError(f"Got mode={arithmetic!r}, but the only valid values are {allowed}.")
    probability = 1 - 0.01 / max(numel, 1)
    # Separate rounding of product and sum: one rounding deeper than an FMA chain, so it covers both (an
    # unknown implementation may or may not fuse).
    spec = AccumulationSpec(contraction=Contraction.SEPARATE, operand_rounding=ARITHMETIC[arithmetic])
    bound = bound_from_sums(sums, spec, probability).probabilistic
    if epilogue is not None:
        bound = epilogue_bound(truth, bound, multiplier, epilogue.negative_slope)
    return bound


def tolerance_from_bounds(
    reference_bound: np.ndarray, candidate_bound: np.ndarray, numel: int, measured: float, labels: tuple[str, str]
) -> dict:
    """{"atol", "rtol", "measured_atol", "basis"}: the largest summed bound over the sampled outputs."""
    atol = float(np.max(reference_bound + candidate_bound))
    return {
        "atol": atol,
        "rtol": 0.0,
        "measured_atol": 1.5 * measured,
        "basis": (
            f"sum of the two sides' probabilistic bounds ({labels[0]} reference, {labels[1]} candidate; "
            f"Higham & Mary 2019 with λ for all {numel} outputs at once, p = 0.99), largest over "
            f"{len(reference_bound)} sampled outputs; rtol 0 because rounding error scales with Σ|w·x|, "
            f"not |y|; measured_atol = 1.5 × the largest observed difference"
        ),
    }
