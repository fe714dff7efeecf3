"""The records of a verdict and the one place its names are spelled: the causes (``CauseKind``), the outcomes that
name no cause (``Outcome``), what the engine found (``Analysis``) and what ``fpa explain`` returns (``Explanation``).

This module holds data only (no torch), so the process that runs a job in a worker and prints its result stays light.
The rules that choose the causes are ``fp_analysis.model.judge``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from enum import Enum

__all__ = ["CAUSES", "FALSE_PASS_VERDICTS", "Analysis", "Cause", "CauseKind", "Explanation", "Outcome", "verdict_name"]


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
    """The same fp32 arithmetic in another order: within the fp32 floor, or re-created by a named order of its sums
    (sequential, pairwise, a thread block's tree); not bitwise equal."""
    FORMULA = "formula"
    """A formula equal in exact arithmetic that rounds otherwise: softmax without the max shift, log(softmax), a
    one-pass variance (catastrophic where the mean is large: the evidence says so), and any fp32 rewrite of a Model
    that sums nothing (sigmoid as 1/(1+exp(−x)), another libm's exp) within its floor."""
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
    NONDETERMINISTIC = "nondeterministic"
    """The candidate gave different outputs for the same input (a race, uninitialised memory, an unseeded draw)."""

    @classmethod
    def precision(cls, side: str, fmt: str) -> CauseKind:
        """The cause that ``side`` ("reference", "candidate", "shared") ran its linear ops' operands in ``fmt``."""
        return cls(f"{side}_{fmt}")


CAUSES = tuple(kind.value for kind in CauseKind)
# Causes that mean the candidate is wrong: a pair with one of them whose KernelBench check passed is a false pass.
FALSE_PASS_VERDICTS = (CauseKind.BUG.value, CauseKind.PARAMETER_MISMATCH.value, CauseKind.NONFINITE.value)


class Outcome(str, Enum):
    """A verdict that names no cause: the two sides equal bit for bit, or why a pair or a fuzz example got none."""

    IDENTICAL = "identical"
    """Both sides equal bit for bit: nothing to explain."""
    USER_CODE_FAILED = "user_code_failed"
    """The user's code failed (exit 3): it raised, exited, crashed, hung or returned what is not a tensor."""
    OUT_OF_SCOPE = "out_of_scope"
    """The Model is beyond what the engine models (exit 2, naming what)."""
    USAGE_ERROR = "usage_error"
    """The files are not a KernelBench pair, or an option is bad (exit 2)."""
    INTERNAL_ERROR = "internal_error"
    """A failure of fpa's own (exit 4)."""
    REFERENCE_NONFINITE = "reference_nonfinite"
    """An ``fpa fuzz`` example on which the reference itself is NaN or ±inf: nothing to compare."""


def verdict_name(causes: list[CauseKind], identical: bool) -> str:
    """The verdict as one string: ``identical`` for equal sides that need no cause, else the causes joined by " + "."""
    if identical and not causes:
        return Outcome.IDENTICAL.value
    return " + ".join(CauseKind(c).value for c in causes)


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


@dataclass(kw_only=True)
class Analysis:
    """What the engine found on one trial (``fp_analysis.model.engine.analyse_model``): the verdict, its causes, each
    side's error against the Model in fp64, the tolerance the explained arithmetic needs, every re-creation tried
    (``hypotheses``), how the floor was measured, the reference's graph and where the candidate departs.
    ``recreations``: side → the rewrite that re-creates it, where the verdict is explained (another trial of the
    same candidate is judged against these alone)."""

    explained: bool
    verdict: str
    causes: list[Cause]
    candidate_vs_fp64: dict = field(default_factory=dict)
    reference_vs_fp64: dict = field(default_factory=dict)
    recommended_tolerance: dict = field(default_factory=dict)
    hypotheses: list[dict] = field(default_factory=list)
    floor: dict = field(default_factory=dict)  # how the floor was measured: method, runs, baseline, units
    ops: list[dict] = field(default_factory=list)  # the reference's graph: one record an ATen op
    location: dict = field(default_factory=dict)  # where the candidate departs: counts per channel, batch item
    recreations: dict = field(default_factory=dict)


@dataclass(kw_only=True)
class Explanation(Analysis):
    """The verdict of ``fpa explain``: the engine's ``Analysis`` of the trial that decides, with KernelBench's check
    (``mismatch``, ``trials``) and what was asked (``context``); ``to_dict`` is the ``--json`` schema.

    ``notes`` lists global switches the solution's import changed (in its own process: under KernelBench,
    where both models share one, the reference would run with them too) and inputs a side wrote into; ``worker``
    the time the job took and what each side's process printed (``fp_analysis.run.worker``).
    """

    mismatch: dict
    trials: list[dict]
    context: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    worker: dict = field(default_factory=dict)

    @classmethod
    def of(cls, analysis: Analysis, **check) -> Explanation:
        """The explanation that ``analysis`` gives, with the check's fields (``mismatch``, ``trials``, ...)."""
        return cls(**{f.name: getattr(analysis, f.name) for f in fields(Analysis)}, **check)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["causes"] = [asdict(c) for c in self.causes]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Explanation:
        """The inverse of ``to_dict`` (as a worker hands it back)."""
        return cls(**{**data, "causes": [Cause(**c) for c in data["causes"]]})
