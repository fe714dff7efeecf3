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

import torch

from ..numerics.rounding import round_to
from .graph import combines_terms
from .reduction_orders import ANY_ORDER
from .rewrites import Rewrite
from .verdict import Analysis, Cause, CauseKind, verdict_name

__all__ = [
    "SIDES",
    "TOLERANCE_MARGIN",
    "Fit",
    "FitTable",
    "Judgement",
    "closest_to_candidate",
    "judge_explained",
    "judge_unexplained",
    "nondeterministic",
    "parameter_analysis",
    "parameters_first",
    "simplest",
    "unlike_any_order",
    "unlike_reduced",
    "unlike_size",
    "unlike_whole",
]

# The tolerance is measured on one trial's inputs; on KernelBench's other trials (same distribution) the
# largest difference moved by 1.2% on the tests' TF32 case. 1.5 keeps a wide margin over that, as the seed
# analysis's measured tolerance did.
TOLERANCE_MARGIN = 1.5
SIDES = ("reference", "candidate")


@dataclasses.dataclass(frozen=True)
class Fit:
    """How far one side is from one re-creation. A fit within the limit everywhere whose departure is concentrated in
    a slice of the output (``fp_analysis.model.concentration``) or moves the whole output one way
    (``fp_analysis.model.drift``) does not re-create the side: rounding does neither."""

    units: float  # the largest departure, in units of σ (inf where one side is non-finite and the other not)
    outside: int  # outputs beyond the limit
    limit: float
    concentrated: str | None = None  # where the departure is concentrated, in words
    departing: int = 0  # outputs of that slice that depart
    disagree: int = 0  # outputs beyond the plain fp32 floor of the re-creation (its resolution, not its allowance)
    unlike: str | None = None  # why a re-creation within its floor is not the side's arithmetic (``unlike_reduced``)
    drift: str | None = None  # how the departure moves the whole output one way, in words (``fp_analysis.model.drift``)

    @property
    def fits(self) -> bool:
        return self.outside == 0 and self.concentrated is None and self.drift is None and self.unlike is None

    @property
    def within(self) -> bool:
        """Within the limit at every output (concentrated or not), and the side's arithmetic."""
        return self.outside == 0 and self.unlike is None


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
        """The rewrites that re-create ``side``: within the limit at every output, not concentrated in a slice."""
        return [h for h in self.tried() if self[side, h].fits]

    def side_left(self) -> bool:
        """Whether a side is not re-created by any rewrite measured (then the ties-away TF32 rewrites are tried)."""
        return any(not self.recreating(side) for side in SIDES)


def unlike_reduced(fit: Fit, plain: Fit) -> str | None:
    """Why a reduced-precision re-creation (``fit``: TF32/bf16/fp16 operands, autocast, a whole Model in half) is not
    the side's arithmetic, None where it may be; ``plain``: the side's fit to plain fp32. Its floor is wide — every
    op's rounding to the format going either way under autocast, the tensor cores' truncating accumulation (K/8
    of fp32's σ) with rounded operands — wide enough to hold an fp32 side whole and a small bug in it; a kernel of that
    arithmetic departs from plain fp32 beyond fp32's resolution and agrees with the re-creation. So at fp32's
    resolution the side must agree with it at more outputs than with plain fp32 (where a ReLU or a clamp makes both
    exact, both agree): strictly more, or a scalar (a loss) off by less than the format's rounding would fit it as
    well as it fits nothing, and an fp32 kernel with one output 1 % off would fit a large-K TF32 floor."""
    if fit.disagree < plain.disagree:
        return None
    return (
        f"it departs from the reduced-precision re-creation at fp32's resolution at {fit.disagree} outputs, from "
        f"plain fp32 at {plain.disagree}: its results are not that precision's"
    )


# How far below a reduced precision's own rounding a side's may stay and still be that precision's (``unlike_size``):
# a kernel of bf16 or fp16 arithmetic rounds much of what the re-creation rounds, so its departures from the truth
# vary from output to output about as much; 1/8 leaves room for one that keeps its results in fp32 where the
# re-creation rounds them, or rounds fewer of its ops. Judged on at least _SIZE_OUTPUTS outputs: the spread of fewer
# is too loose a measure (a few outputs' departures may be near equal by chance).
_SIZE_SHARE = 1 / 8
_SIZE_OUTPUTS = 16


def unlike_size(side: float, recreation: float, outputs: int) -> str | None:
    """Why a reduced-precision re-creation is not the side's arithmetic, None where it may be: ``side`` and
    ``recreation`` say how much each departs from the fp64 truth from output to output (``compare.
    departure_spreads``: the median absolute deviation, over the ``outputs`` where the re-creation departs). That
    re-creation's floor is every op's rounding in the format going either way, wide enough to hold an fp32 side and a
    constant off in its fourth digit (a held-out logsumexp with a stray 1e-3, +0.002 at each of 16 outputs, was
    `candidate_bf16`; fp16 fitted it too). Rounding in a format errs by up to its unit roundoff at each rounding, in
    directions that differ from output to output (Higham 2002, §2.2 and §3.1; Higham & Mary 2019, the floor's model),
    so a side that rounded there varies about as much as the re-creation; one that varies by an eighth of it or less,
    however far it is moved as a whole, did not round there, and what moves it is not that precision."""
    if outputs < _SIZE_OUTPUTS or recreation <= 0.0 or side >= _SIZE_SHARE * recreation:
        return None
    return (
        f"its departures from the fp64 truth vary by {side:.3g} from output to output (median absolute deviation over "
        f"{outputs} outputs), the re-creation's by {recreation:.3g}: its results are not that precision's"
    )


# Share of a side's finite outputs that must be values of a format for the whole Model in that format (``Model.half()``)
# to be its arithmetic: such a Model returns only that format's values, cast to fp32 or not; an fp32 side has about
# one in 2^13 (fp16) or 2^16 (bf16) of its values on that grid by chance.
_ON_GRID = 0.9


def unlike_whole(values: torch.Tensor, fmt: str, what: str | None = None) -> str | None:
    """Why the whole Model in ``fmt`` (``Model.half()``, ``Model.bfloat16()``) is not the side's arithmetic, None
    where it may be: its outputs (``values``) are not ``fmt``'s values. That re-creation's floor (every op's rounding
    to the format) is wide enough to hold an fp32 side with a bug smaller than the format's rounding — a constant off by
    2 %, an eps in the wrong place (a held-out set of ours had all three such bugs explained as fp16/bf16) — but a
    Model run in ``fmt`` returns nothing else than ``fmt``'s values, which an fp32 kernel's are not. ``what``: the
    arithmetic that returns only them, where another (the Model under autocast whose last op runs in ``fmt``)."""
    share = grid_share(values, fmt)
    if share is None or share >= _ON_GRID:
        return None
    return (
        f"only {100 * share:.1f} % of its outputs are {fmt} values, where {what or f'the whole Model in {fmt}'} "
        "returns nothing else: its results are not that precision's"
    )


def grid_share(values: torch.Tensor, fmt: str) -> float | None:
    """The share of ``values``' finite elements that are ``fmt``'s values (None where none is finite); at least
    ``_ON_GRID`` where the arithmetic that made them rounds its results to ``fmt`` last."""
    finite = values[torch.isfinite(values)]
    if not finite.numel():
        return None
    dtype = _TORCH_FORMATS.get(fmt)
    # A value is fmt's exactly when rounding it to fmt gives it back; torch's conversion rounds to nearest even
    # (as round_to does) on the tensor's own device, where round_to takes float64 through numpy on the CPU (on the
    # seed's 16 M outputs, 3.9 s of an 18.9 s explain on an H200).
    rounded = finite.to(dtype).to(finite.dtype) if dtype is not None else round_to(finite, fmt)
    return float((rounded == finite).double().mean())


_TORCH_FORMATS = {"bf16": torch.bfloat16, "fp16": torch.float16}


def on_grid(values: torch.Tensor, fmt: str) -> bool:
    """Whether ``values`` are ``fmt``'s values (``grid_share``): a re-creation under autocast whose last op ran in
    ``fmt`` returns them, and so must a side of that arithmetic."""
    share = grid_share(values, fmt)
    return share is not None and share >= _ON_GRID


def unlike_any_order(agreeing: dict[str, int], outputs: int) -> str | None:
    """Why the any-order allowance of sums (``reduction_orders.ANY_ORDER``) is not the side's arithmetic, None where it
    may be; ``agreeing``: for plain fp32 and each named order (by key), at how many of the ``outputs`` the side is
    within one σ of it. A kernel whose sums run in the order threads arrive agrees that closely with no re-created
    order at most outputs; one that agrees with a named order at half its outputs or more computes that order, and
    where it departs from it is where it errs (a term dropped from one sum), however small next to what an arbitrary
    order could do."""
    if not agreeing:
        return None
    key, count = max(agreeing.items(), key=lambda item: item[1])
    if count * 2 < outputs:
        return None
    return (
        f"{key} re-creates it to within one σ at {count} of {outputs} outputs: its sums are in that order, and the "
        "outputs that depart from it are not arithmetic"
    )


def simplest(table: FitTable, side: str) -> Rewrite:
    """The rewrite to name for ``side`` among those that re-create it: plain first; then the fewest changes; then an
    exact re-creation before fast-math's looser allowance; then TF32 before bf16 and fp16 (operands inside fp16's
    range round alike in TF32 and fp16, and a TF32 tensor core is the usual reason); ties to even before the others;
    then the closest: first at fp32's resolution (the outputs beyond the plain floor of each: a real Model.half() fits
    half_bf16's wider floor too, but agrees with half_fp16), then in units of each one's σ."""
    return min(
        table.recreating(side),
        key=lambda h: (
            not h.plain,
            h.change_count,
            h.fast_math,
            h.precision not in (None, "tf32"),
            h.ties != "rne",
            table[side, h].disagree,
            table[side, h].units,
        ),
    )


def closest_to_candidate(table: FitTable) -> Rewrite:
    """The re-creation a candidate that none re-creates is judged against: not one whose arithmetic is not the
    candidate's (``unlike_reduced``: its wide floor leaves few outputs beyond it, but agrees with a kernel of another
    arithmetic nowhere); one within the limit everywhere but for a concentrated slice or a drift first (its arithmetic
    re-creates the rest; a bug hiding in a wider floor is where it is, not where another floor is passed); the fewest
    outputs left out (beyond the limit, or departing in a concentrated slice), the any-order allowance of sums
    (``reduction_orders.ANY_ORDER``) last among those not within; then the simplest rewrite (a bug in one
    channel is "plain fp32 elsewhere"); then the smallest departure."""

    def key(h: Rewrite):
        fit = table["candidate", h]
        # the any-order allowance re-creates no order, so where a side departs from it says nothing of where it errs
        allowance = h.order == ANY_ORDER and not fit.within
        return (fit.unlike is not None, not fit.within, allowance, fit.outside + fit.departing, h.change_count,
                fit.units)  # fmt: skip

    return min(table.tried(), key=key)


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
    side, and two plain-fp32 sides that differ bitwise are ``accumulation_order`` where the Model sums or multiplies
    many terms (``graph.combines_terms``: their order is what plain fp32 leaves open), ``formula`` where it does not
    (elementwise ops only: the two sides evaluate the same function by other fp32 formulas or library routines)."""
    if identical and reference.precision is not None and reference == candidate:
        return Judgement([(CauseKind.precision("shared", reference.precision), "both", reference)],
                         verdict_name([], True), shared=True)  # fmt: skip
    causes = [
        (kind, side, h) for side, h in zip(SIDES, (reference, candidate), strict=True) for kind in h.kinds(side, ops)
    ]
    if not causes and not identical:
        order = any(combines_terms(op) for op in ops)
        causes = [(CauseKind.ACCUMULATION_ORDER if order else CauseKind.FORMULA, "pair", None)]
    return Judgement(causes, verdict_name([kind for kind, _, _ in causes], identical), shared=False)


def judge_unexplained(outside: int, nonfinite: int) -> CauseKind:
    """The cause of a candidate no rewrite re-creates, from the outputs beyond the floor of the closest re-creation:
    ``nonfinite`` where every one of them is NaN or ±inf where the re-creation has numbers, else ``bug``."""
    return CauseKind.NONFINITE if nonfinite and nonfinite == outside else CauseKind.BUG


def parameters_first(first: Analysis, second: Analysis) -> bool:
    """Whether the analysis against the reference Model with the candidate's parameter values (``second``) gives the
    verdict although the one with the reference's own (``first``) explained the candidate: it re-creates the
    candidate with plain arithmetic where ``first`` needed a rewrite (an approximation's allowance, a precision).
    A difference of parameters is observed; an arithmetic is a hypothesis, and the wider its allowance the more
    a small difference hides in it (a weight 1e-5 off under fast-math tanh)."""
    plain = Rewrite().key()
    return (
        second.explained
        and second.recreations.get("candidate") == plain
        and first.recreations.get("candidate") not in (None, plain)
    )


def parameter_analysis(
    first: Analysis, second: Analysis | None, differing: list[str], stored: dict[str, list[str]], shares: dict
) -> Analysis:
    """The verdict where the candidate's parameters are not the reference's and the analysis against the reference
    Model as built (``first``) does not re-create the candidate; ``second``: the analysis against the reference
    Model evaluated with the candidate's values (``fp_analysis.explain.parameters``; None where none could be).

    ``differing``: the parameters whose values differ, in words; ``stored``: format → the parameters the candidate
    holds rounded to it; ``shares``: ``parameters`` (max |reference − reference with the candidate's values|) and
    ``arithmetic`` (max |reference with the candidate's values − candidate|). Where ``second`` re-creates the
    candidate, its causes stand beside the parameters': ``parameter_mismatch`` (differing values: no tolerance makes
    that right) or ``candidate_<fmt>`` (rounded storage, an arithmetic like any other); where it does not, a differing
    parameter is named beside its bug, and a rounded one alone changes nothing (``first`` stands)."""
    if second is None or (not second.explained and not differing):
        return first
    causes = []
    share = {k: 0.0 if v is None else v for k, v in shares.items()}  # None: no output finite on both sides
    if differing:
        evidence = (
            f"{'; '.join(differing)}: with the candidate's values the reference Model moves by up to "
            f"{share['parameters']:.3g} (the parameters' share), and what is left, up to {share['arithmetic']:.3g}, "
            + ("is re-created by arithmetic" if second.explained else "is not")
        )
        causes.append(Cause(CauseKind.PARAMETER_MISMATCH.value, evidence, share["parameters"], "candidate"))
    for fmt, names in stored.items():
        evidence = f"the candidate holds {', '.join(names)} rounded to {fmt}: re-created with those values"
        causes.append(Cause(CauseKind.precision("candidate", fmt).value, evidence, share["arithmetic"], "candidate"))
    # the pair's own causes (accumulation order between two plain sides) say nothing beside a parameter's
    causes += [c for c in second.causes if c.side != "pair"]
    explained = second.explained and not differing
    if explained:  # the tolerance the pair needs: the rounded parameters' own share too, with the same margin
        given = second.recommended_tolerance
        atol = given["atol"] + TOLERANCE_MARGIN * share["parameters"]
        share_words = f"{TOLERANCE_MARGIN:g} × the rounded parameters' share ({share['parameters']:.3g})"
        basis = f"{given.get('basis', 'the re-creations')}; plus {share_words}"
        tolerance = {**given, "atol": atol, "basis": basis}
    else:
        tolerance = {"atol": None, "rtol": None, "basis": "parameters differ: no tolerance makes this right"}
    names = [CauseKind(c.name) for c in causes]
    return dataclasses.replace(second, explained=explained, verdict=verdict_name(names, False), causes=causes,
                               recommended_tolerance=tolerance)  # fmt: skip


def nondeterministic(first: Analysis, second: Analysis, differing: int, outputs: int, spread: float | None) -> Analysis:
    """The verdict where the candidate, run twice on the same inputs, returned two outputs (``first``, ``second``:
    the analysis of each run; ``differing`` of ``outputs`` differ, by up to ``spread``): ``nondeterministic`` (a race,
    atomics adding in whatever order threads arrive, uninitialised memory), beside the causes of the run that is
    worse (the one not explained, else the first). Explained only where both runs are: an atomic sum's orders are
    each an fp32 order; a race that loses an update is a bug in the run it hits."""
    worse = second if first.explained and not second.explained else first
    by = "NaN or ±inf on one run only" if spread is None else f"by up to {spread:.3g}"
    words = (
        f"run twice on the same inputs, the candidate returned outputs that differ at {differing} of {outputs} "
        f"outputs, {by}: run 1 is {first.verdict}, run 2 {second.verdict}"
    )
    cause = Cause(CauseKind.NONDETERMINISTIC.value, words, spread, "candidate")
    causes = [cause, *worse.causes]
    explained = first.explained and second.explained
    names = [CauseKind(c.name) for c in causes]
    return dataclasses.replace(worse, explained=explained, verdict=verdict_name(names, False), causes=causes)
