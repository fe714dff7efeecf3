"""The record of a verdict: the causes found and their evidence, as ``fpa explain`` returns and prints them.

This module holds data only (no torch), so the process that runs a job in a worker and prints its result
stays light; ``fp_analysis.explain`` fills these records in.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

__all__ = ["CAUSES", "Cause", "Explanation"]

# Every cause a verdict can name. A precision cause says which side's linear ops (convolutions, matrix
# products) ran their operands in that format; ``shared_*`` that both sides agree only because both do;
# ``approximation`` an activation computed by a known approximation (fast-math transcendentals, a naive
# softplus or Mish form), ``gelu_approximation`` its GELU case; ``nonfinite`` NaN or ±inf where the
# re-creation has numbers.
CAUSES = (
    "reference_tf32",
    "reference_bf16",
    "reference_fp16",
    "candidate_tf32",
    "candidate_bf16",
    "candidate_fp16",
    "shared_tf32",
    "shared_bf16",
    "shared_fp16",
    "accumulation_order",
    "approximation",
    "gelu_approximation",
    "parameter_mismatch",
    "nonfinite",
    "bug",
)


@dataclass
class Cause:
    """One named cause with its evidence; ``residual_max`` is what is left after re-creating it (abs)."""

    name: str
    evidence: str
    residual_max: float
    side: str  # "reference", "candidate", "both" or "pair"
    residual_units: float | None = None  # the same residual in units of σ, the floor's unit
    op: str | None = None  # the op of the Model it acts on: "the ConvTranspose3d `conv`", "the gelu after …"


@dataclass
class Explanation:
    """The verdict and its evidence; ``to_dict`` is the ``--json`` schema.

    ``notes`` lists global switches the solution's import changed (in its own process: under KernelBench,
    where both models share one, the reference would run with them too); ``worker`` the time the job took
    and what each side's process printed (``fp_analysis.worker``).
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
