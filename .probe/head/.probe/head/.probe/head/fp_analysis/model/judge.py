"""The verdict rules, as pure functions over a table of fits: which re-creation of each side to name, and whether the
pair is identical, shares an inexact arithmetic, differs by order, or holds a bug.

A ``Fit`` says how far one side is from one re-creation (in units of σ, the floor's unit) and how many outputs lie
beyond the limit; a ``FitTable`` holds one per side and rewrite. Nothing here touches a tensor or a process, so every
rule is tested on a table written by hand (tests/unit/test_judge.py); ``fp_analysis.model.engine`` measures the fits
and words the evidence.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from .rewrites import PRECISIONS, Rewrite
from .verdict import Analysis, Cause, CauseKind, verdict_name

__all__ = [
    "SIDES",
    "Fit",
    "FitTable",
    "Judgement",
    "closest_to_candidate",
    "judge_explained",
    "judge_unexplained",
    "parameter_analysis",
    "simplest",
]

SIDES = ("reference", "candidate")


@dataclasses.dataclass(frozen=True)
class Fit:
    """How far one side is from one re-creation."""

    units: float  # the largest departure, in units of σ (inf where one side is non-finite and the other not)
    outside: int  # outputs beyond the limit
    limit: float

    @property
    def fits(self) -> bool:
        return self.outside == 0


class FitTable:
    """The fits measured so far, side × rewrite, over the rewrites in the order they are listed (``rewrites_of``)."""

    def __init__(self, rewrites: Sequence[Rewrite]):
        self.rewrites = list(rewrites)
        self._fits: dict[tuple[str, str], Fit] = {}

    def record(self, side: str, rewrite: Rewrite, fit: Fit) -> None:
        self._fits[(side, rewrite.key())] = fit

    def __getitem__(self, side_and_rewrite: tuple[str, Rewrite]) -> Fit:
        side, rewrite = side_and_rewrite
        return self._fits[(side, rewrite.key())]

    def tried(self) -> list[Rewrite]:
        """The rewrites measured, in listed order."""
        return [h for h in self.rewrites if ("reference", h.key()) in self._fits]

    def recreating(self, side: str) -> list[Rewrite]:
        """The rewrites that re-create ``side``: within the limit at every output."""
        return [h for h in self.tried() if self[side, h].fits]

    def side_left(self) -> bool:
        """Whether a side is not re-created by any rewrite measured (then the ties-away TF32 rewrites are tried)."""
        return any(not self.recreating(side) for side in SIDES)


def simplest(table: FitTable, side: str) -> Rewrite:
    """The rewrite to name for ``side`` among those that re-create it: plain first; then the fewest changes; then an
    exact re-creation before fast-math's looser allowance; then TF32 before bf16 before fp16 (operands inside fp16's
    range round alike in TF32 and fp16, and a TF32 tensor core is the usual reason); ties to even before ties away;
    then the closest."""
    return min(
        table.recreating(side),
        key=lambda h: (
            not h.plain,
            h.change_count,
            h.fast_math,
            PRECISIONS.index(h.precision) if h.precision else -1,
            h.ties != "rne",
            table[side, h].units,
        ),
    )


def closest_to_candidate(table: FitTable) -> Rewrite:
    """The re-creation a candidate that none re-creates is judged against: the fewest outputs left out, then the
    simplest rewrite (a bug in one channel is "plain fp32 elsewhere"), then the smallest departure."""
    return min(
        table.tried(),
        key=lambda h: (table["candidate", h].outside, h.change_count, table["candidate", h].units),
    )


@dataclasses.dataclass(frozen=True)
class Judgement:
    """What the rules decide for an explained pair: the causes to name (each with the side it is about and the
    rewrite that re-creates it, ``None`` for a cause of the pair) and the verdict's name."""

    causes: list[tuple[CauseKind, str, Rewrite | None]]  # (cause, side, the rewrite it comes from)
    verdict: str
    shared: bool  # both sides equal only because both compute in the same reduced precision

    @property
    def kinds(self) -> list[CauseKind]:
        return [kind for kind, _, _ in self.causes]


def judge_explained(reference: Rewrite, candidate: Rewrite, identical: bool, ops: Sequence) -> Judgement:
    """The causes of a pair whose two sides are each re-created (``reference``, ``candidate``: the rewrites named by
    ``simplest``); ``identical``: the two sides are equal bit for bit.

    Equal sides both re-created by the same reduced-precision rewrite are ``shared_<fmt>`` (equal only because
    both are inexact alike) and the verdict is ``identical``; otherwise each rewrite's changes are causes on its
    side, and two plain-fp32 sides that differ bitwise are ``accumulation_order``."""
    if identical and reference.precision is not None and reference == candidate:
        return Judgement([(CauseKind.precision("shared", reference.precision), "both", reference)],
                         verdict_name([], True), shared=True)  # fmt: skip
    causes = [
        (kind, side, h) for side, h in zip(SIDES, (reference, candidate), strict=True) for kind in h.kinds(side, ops)
    ]
    if not causes and not identical:
        causes = [(CauseKind.ACCUMULATION_ORDER, "pair", None)]
    return Judgement(causes, verdict_name([kind for kind, _, _ in causes], identical), shared=False)


def judge_unexplained(outside: int, nonfinite: int) -> CauseKind:
    """The cause of a candidate no rewrite re-creates, from the outputs beyond the floor of the closest re-creation:
    ``nonfinite`` where every one of them is NaN or ±inf where the re-creation has numbers, else ``bug``."""
    return CauseKind.NONFINITE if nonfinite == outside else CauseKind.BUG


def parameter_analysis(differences: list[str], max_abs: float | None) -> Analysis | None:
    """The verdict where the candidate's parameters are not the reference's (``differences``, in words; empty:
    they are): ``parameter_mismatch``, which no tolerance makes right. None where there is no difference."""
    if not differences:
        return None
    cause = Cause(CauseKind.PARAMETER_MISMATCH.value, "; ".join(differences), max_abs, "pair")
    tolerance = {"atol": None, "rtol": None, "basis": "parameters differ: no tolerance makes this right"}
    return Analysis(explained=False, verdict=cause.name, causes=[cause], recommended_tolerance=tolerance)
