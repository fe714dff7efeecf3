"""The record of a verdict: the causes found and their evidence, as ``fpa explain`` returns and prints them.

This module holds data only (no torch), so the process that runs a job in a worker and prints its result
stays light; ``fp_analysis.explain.job`` fills these records in.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum

__all__ = ["CAUSES", "Cause", "CauseKind", "Explanation"]


class CauseKind(str, Enum):
    """Every cause a verdict can name (``Cause.name`` holds the value). A precision cause says which side's
    linear ops (convolutions, matrix products) ran their operands in that format."""

    REFERENCE_TF32 = "reference_tf32"
    """The reference's linear ops rounded their operands to TF32 (cuDNN's default for fp32 convolutions)."""
    REFERENCE_BF16 = "reference_bf16"
    """The reference's linear ops ran in bf16 (autocast)."""
    REFERENCE_FP16 = "reference_fp16"
    """The reference's linear ops ran in fp16 (autocast)."""
    CANDIDATE_TF32 = "candidate_tf32"
    """The candidate rounds its linear ops' operands to TF32 (a TF32 tensor-core kernel)."""
    CANDIDATE_BF16 = "candidate_bf16"
    """The candidate computes its linear ops in bf16."""
    CANDIDATE_FP16 = "candidate_fp16"
    """The candidate computes its linear ops in fp16."""
    SHARED_TF32 = "shared_tf32"
    """Both sides equal only because both are TF32: each is as far from fp64 as TF32 makes it."""
    SHARED_BF16 = "shared_bf16"
    """Both sides equal only because both compute in bf16."""
    SHARED_FP16 = "shared_fp16"
    """Both sides equal only because both compute in fp16."""
    ACCUMULATION_ORDER = "accumulation_order"
    """The same fp32 arithmetic in another order: within the fp32 floor, not bitwise equal."""
    APPROXIMATION = "approximation"
    """An activation computed by a known approximation: fast-math transcendentals, a naive softplus or Mish."""
    GELU_APPROXIMATION = "gelu_approximation"
    """GELU's other form (tanh for erf, or the reverse): ``approximation``'s GELU case."""
    PARAMETER_MISMATCH = "parameter_mismatch"
    """The candidate's parameters are not the reference's: no tolerance makes that right."""
    NONFINITE = "nonfinite"
    """NaN or ±inf where the re-creation has numbers."""
    BUG = "bug"
    """No modelled arithmetic re-creates the candidate: where it departs is located."""


CAUSES = tuple(kind.value for kind in CauseKind)


@dataclass
class Cause:
    """One named cause with its evidence; ``residual_max`` is what is left after re-creating it (abs)."""

    name: str
    evidence: str
    residual_max: float
    side: str  # "reference", "candidate", "both" or "pair"
    residual_units: float | None = None  # the same residual in units of σ, the floor's unit
    op: str | None = None  # the op of the Model it acts on: "the ConvTranspose3d `conv`", "the gelu after …"

    def __post_init__(self):
        self.name = CauseKind(self.name).value  # a plain string in records and JSON, but only a CauseKind's


@dataclass
class Explanation:
    """The verdict and its evidence; ``to_dict`` is the ``--json`` schema.

    ``notes`` lists global switches the solution's import changed (in its own process: under KernelBench,
    where both models share one, the reference would run with them too); ``worker`` the time the job took
    and what each side's process printed (``fp_analysis.run.worker``).
    """

    explained: bool
    verdict: str
    causes: list[Cause]
    mismatch: dict
    candidate_vs_fp64: dict
    reference_vs_fp64: dict
    recommended_tolerance: dict
    trials: list[dict]
    hypotheses: list[dict] = field(default_factory=list)
    context: dict = field(default_factory=dict)
    floor: dict = field(default_factory=dict)  # how the floor was measured: method, runs, baseline, units
    ops: list[dict] = field(default_factory=list)  # the reference's graph: one record an ATen op
    location: dict = field(default_factory=dict)  # where the candidate departs: counts per channel, batch item
    notes: list[str] = field(default_factory=list)
    worker: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["causes"] = [asdict(c) for c in self.causes]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Explanation:
        """The inverse of ``to_dict`` (as a worker hands it back)."""
        return cls(**{**data, "causes": [Cause(**c) for c in data["causes"]]})
