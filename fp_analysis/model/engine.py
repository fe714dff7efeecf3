"""Explaining a mismatch on a whole Model: which arithmetic re-creates each side, or where the candidate is wrong.

The reference Model is the graph it runs (``fp_analysis.model.interpose``). ``analyse_model``:

1. **Evaluates it** as PyTorch does in fp32 (the baseline arithmetic) and in fp64 (the truth, recording each
   linear op's Σ|w·x|; composite ops through their decompositions), and refuses what it cannot model
   (``OutOfScopeError``, exit 2, ``scope``): random draws in forward, a path in fp64 other than in fp32 (control flow
   that depends on the data), an op that fails in fp64. An integer output (argmax) is ``selection``'s.
2. **Measures the floor** (``floor``). σ is the spread of ``runs`` Monte-Carlo evaluations in fp64 in which every op's
   result carries a rounding error of fp32 size in a random direction (``interpose.Noise``): ±u·Σ|w·x| at a
   linear op (the scale of an fp32 dot product's error, Higham 2002 §3.1), ±u·Σ|x| at a sum (§4.2), ±u·(|f(x)| + |x|)
   at an activation
   (an fp32 implementation of f(x) = x·g(x) errs by about u·|x| where g is computed with cancellation, as
   GELU's 1 + erf(x/√2) is for x ≪ 0), ±u·|result| elsewhere, nothing where an op rounds nothing.
   Every error is applied at ``FLOOR_MULTIPLIER`` times its size and the spread divided back: a secant over
   the floor's width, so an error that crosses a kink (ReLU at 0, a clamp bound, a max-pool tie) counts as
   much as it can move the output, where the derivative there would say 0. Two runs give every error the same
   sign, so errors passing through increasing functions add up (as they can in the worst case); the others
   draw random signs, so errors meeting in a sum or a norm cancel as they do in practice (the probabilistic
   view of Higham & Mary 2019) — a uniform shift that a norm removes is not all the norm's input can do.
   Around each precision rewrite σ is measured again (its two one-sign runs): rounding the operands can carry
   an output across a kink that the rounding around the fp64 truth does not reach.
   *Why Monte-Carlo arithmetic* (Parker 1997; Verificarlo, Denis et al. 2016) rather than first-order
   propagation with forward-mode AD: a norm, softmax or subtraction after the conv gives the Jacobian entries
   of both signs, so one tangent J·b cancels the errors it should add (and |J|·b needs a pass per output);
   ReLU, clamp, hardtanh and max-pool have kinks where a derivative is 0 or undefined yet rounding moves the
   output, which re-evaluating the real op sees; and it needs nothing per op, so any op PyTorch evaluates in
   fp64 is covered. The cost is ``runs`` evaluations. On a single convolution σ is u·Σ|w·x| (the signs have
   magnitude 1), the unit of the seed analysis, so its verdicts carry over (tests check).
   A side's departure from a re-creation is measured in units of σ; the baseline is the fp32 evaluation's
   own error in those units, and the floor 8 × max(1, baseline): error relative to a same-precision baseline
   (STYLE 8; different fp32 orders differ by a few times, and 8 leaves a margin of about 4).
3. **Re-creates each side** by rewriting the reference graph, one change at a time (``rewrites``): the
   linear ops' operands in TF32/bf16/fp16 (all of them, the convolutions or the matrix products apart, each
   op alone), rounded to nearest with ties to even, and for TF32 also with ties away from zero or toward zero
   where a side is left over (PTX's cvt.rna: cuDNN's implicit-GEMM TF32 convolutions round so, the CUTLASS GEMM of
   a 1×1 conv to even, experiments/results/tf32_probe_h200.json; a tensor core given fp32 bits truncates them);
   another form of one activation or formula of one op
   (``forms``: a formula's cause is ``formula``); fast-math transcendentals, re-created through ``__expf``'s rounded
   argument, each op allowed its measured residual only (``fast_math``); precisions with forms; and where a side is
   left over, the whole Model under ``torch.autocast`` in bf16 or fp16 (``autocast``: results in the format too) or
   wholly in it (``Model.half()``), and its sums in a named order or within what any order can do
   (``reduction_orders``). A side is re-created by a rewrite when it stays within the floor of it at every output,
   its departure is concentrated in no slice of the output (``concentration``: one channel, batch item, feature,
   band or the edges — rounding errs alike everywhere, a bug does not, however small), the candidate's does not move
   the whole output one way (``drift``: rounding errs in random directions and cancels over many outputs), the
   rewrite is finite where the truth is, and, for a reduced precision, it agrees with the re-creation at more
   outputs than with plain fp32 (``judge.unlike_reduced``); a precision rewrite may also leave the tensor cores'
   truncating fp32 accumulation, about half an ulp per mma step of 8 products (Fasi, Higham, Mikaitis & Pranesh
   2021, PeerJ Comput. Sci. 7:e330): K/8 more of plain fp32's σ (``scale``).
4. **Decides** (the rules: ``judge``). Both sides re-created: their causes, each naming the op it acts on;
   ``identical`` or ``accumulation_order`` when both are plain fp32; a ``shared_<fmt>`` cause when they agree bit
   for bit only because both are inexact the same way, with the tolerance an fp32-exact kernel would need against
   that reference. The reference not re-created: out of scope (exit 2), never a verdict. The candidate not
   re-created: ``nonfinite`` (NaN/±inf where the closest re-creation has numbers) or ``bug``, located over
   all outputs (channels, batch items, bands, edges, with counts that add up). The parameters are weighed after
   (``fp_analysis.explain.parameters``): evidence, not a gate.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import time
from collections.abc import Callable, Sequence

import torch

from ..errors import AnalysisMemoryError, OutOfScopeError
from ..numerics.memory import format_bytes
from ..numerics.metrics import error_stats
from . import compare
from .concentration import Concentration, concentration
from .drift import LEAST_RUNS, Drift, drift_of, drifting, drifting_outputs
from .floor import FLOOR_MULTIPLIER, floor_of, with_underflow
from .graph import OpKind, describe_op
from .interpose import evaluate
from .judge import (
    SIDES,
    FitTable,
    closest_to_candidate,
    judge_explained,
    judge_unexplained,
    on_grid,
    simplest,
    unlike_any_order,
    unlike_reduced,
    unlike_size,
    unlike_whole,
)
from .locate import locate
from .reduction_orders import ANY_ORDER
from .rewrites import Rewrite, evaluations_needed, rewrites_of
from .scope import check_path, checked_fp32, guarded
from .selection import analyse_selection
from .twins import twin_evidence, twin_words
from .verdict import Analysis, Cause, CauseKind

__all__ = ["Effort", "analyse_model"]

# A formula this many times the fp32 floor from the truth loses bits to cancellation, not rounding (2^4: four bits).
_CATASTROPHIC = 16.0
_LOSES = "the re-creation itself is NaN or ±inf"
_KEEP_BYTES = 2 * 10**9  # rewrites' values and σ held at most (see _Analysis.rewritten)
# how many times what the named orders of the sums err the any-order allowance may err (``_beyond_named_orders``)
_ANY_ORDER_REACH = 4.0


@dataclasses.dataclass(frozen=True)
class Effort:
    """How much an analysis evaluates: ``runs`` Monte-Carlo runs with random signs for the floor (besides the two
    one-sign runs), ``twin_samples`` outputs compared with the CPU twins (0: none), and ``only`` the rewrites to try
    (their keys; plain fp32 is always tried; None: all). ``recheck(keys)``: a trial judged against the rewrites that
    re-created another trial of the same candidate, at a fraction of the evaluations."""

    runs: int = 8
    twin_samples: int = 2000
    only: frozenset[str] | None = None

    @classmethod
    def recheck(cls, keys) -> Effort:
        return cls(runs=2, twin_samples=0, only=frozenset(keys))


def analyse_model(
    model: torch.nn.Module,
    inputs: Sequence,
    reference: torch.Tensor,
    candidate: torch.Tensor,
    *,
    seed: int = 0,
    effort: Effort = Effort(),
    progress: Callable[[str], None] | None = None,
    watch: Callable[[str], contextlib.AbstractContextManager] | None = None,
) -> Analysis:
    """The causes of ``candidate`` ≠ ``reference`` on ``inputs`` (see the module docstring).

    ``reference`` is what the reference Model returned in the check (its default precision), ``candidate``
    what the candidate returned on the same inputs; both on the Model's device. The baseline is the Model in
    plain fp32 (on a GPU, cuDNN's and cuBLAS's TF32 off), so fpa explain and fpa fuzz judge alike. Where the Model
    is one convolution, ``effort.twin_samples`` outputs are compared with the CPU twins of cuDNN's fp32 order.
    ``progress(text)`` hears each step; ``watch(where)`` wraps each evaluation of the Model (the worker reports it,
    so the timeout applies). An evaluation that fails is out of scope (``OutOfScopeError`` with what failed).
    """
    say = progress or (lambda text: None)
    guard = watch or (lambda where: contextlib.nullcontext())
    if not reference.is_floating_point():  # an index output (argmax): compared exactly, ties explained
        with guard("Model.forward (the values its argmax or argmin chooses among, for the analysis)"):
            return analyse_selection(model, inputs, reference, candidate, seed=seed)
    try:
        analysis = _Analysis(model, inputs, {"reference": reference, "candidate": candidate}, seed, effort, say, guard)
        table = analysis.measure_fits()
        if not table.recreating("reference"):
            raise OutOfScopeError(analysis.unrecreated_reference(table))
        if table.recreating("candidate"):
            return analysis.explained(table)
        return analysis.unexplained(table)
    except torch.OutOfMemoryError as error:  # the analysis's own copies: never the user's failure, nor ours
        raise AnalysisMemoryError(
            f"the analysis needs more {reference.device.type} memory than is free ({str(error)[:160]}): run it with a "
            "smaller batch, or on a device with more memory"
        ) from None


class _Analysis:
    """One analysis in progress: the Model's evaluations (each guarded, a failure out of scope), the truth and its
    floor, and the rewrites' values and σ, kept while they are small; past ``_KEEP_BYTES`` the few needed at the
    end are evaluated again rather than every one held (a full-size output is a GB in fp64)."""

    def __init__(self, model, inputs, sides: dict, seed: int, effort: Effort, say, guard):
        self.model, self.inputs, self.sides, self.seed, self.effort = model, inputs, sides, seed, effort
        self.say, self.guard = say, guard
        say("the Model in fp32")
        started = time.monotonic()
        as_fp32 = self.run("in fp32", checked_fp32, model, inputs)
        outputs = as_fp32.output.numel()
        say(
            f"up to {evaluations_needed(as_fp32.ops, effort.runs)} evaluations of the Model in fp64 to come (the "
            f"truth, {effort.runs + 2} Monte-Carlo runs, the rewrites); the fp32 one took "
            f"{time.monotonic() - started:.1f} s; about "
            f"{format_bytes(outputs * 8 * (4 + 2 * len(rewrites_of(as_fp32.ops))))} of outputs held at most"
        )
        self.drift_runs: dict[str, dict] = {"plain": {}}  # rewrite → its runs' drifts (``floor_of``'s run_drifts)
        self.truth, self.sigma = self.run("in fp64", floor_of, model, inputs, runs=effort.runs, seed=seed,
                                          run_drifts=self.drift_runs["plain"])  # fmt: skip
        self.ops = self.truth.ops
        check_path(as_fp32.ops, self.ops)
        self.y64 = self.truth.output
        _check_shapes(self.y64, sides["reference"], sides["candidate"])
        self.fp32_output = as_fp32.output  # the fp32 Model's own error is the baseline of the floor and of a shift
        fp32 = as_fp32.output.to(self.y64.dtype)
        self.sigma = with_underflow(self.sigma, fp32, self.y64)
        # what legitimate arithmetic may drift by (``drift``): the fp32 Model's own drift, and what every rounding one
        # way does (a constant such as 1/n rounded once is shared by every output, and a subtraction may magnify it)
        self.own_drift = drift_of(fp32, self.y64).abs()
        base_units = compare.fit(fp32, self.y64, self.sigma, math.inf).units
        self.floor = FLOOR_MULTIPLIER * max(1.0, base_units if math.isfinite(base_units) else 1.0)
        self.base_units = base_units
        self.tensor_core = max((o.terms for o in self.ops if o.kind is OpKind.LINEAR), default=0) / 8
        self.rewrites = [h for h in rewrites_of(self.ops) if effort.only is None or h.plain or h.key() in effort.only]
        self.keep = self.y64.numel() * self.y64.element_size() * 2 * len(self.rewrites) <= _KEEP_BYTES
        self.kept: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
        self.concentrations: dict[tuple[str, str], Concentration | None] = {}
        self.found_drifts: dict[str, Drift | None] = {}  # rewrite → the candidate's drift from it
        self.records: list[dict] = []

    def run(self, what: str, fn, *args, **kwargs):
        """``fn(*args, **kwargs)``, one evaluation of the Model, guarded; any failure but our own is out of scope."""
        return guarded(self.guard, "the analysis")(what, fn, *args, **kwargs)

    def rewritten(self, h: Rewrite) -> tuple[torch.Tensor, torch.Tensor]:
        """(value, σ) of a precision or form rewrite: σ around it too, since rounding the operands can carry
        an output across a kink (a ReLU, a clamp) that the rounding around the fp64 truth cannot reach."""
        if h.key() in self.kept:
            return self.kept[h.key()]
        if h.order is not None and h.order != ANY_ORDER:
            # a named order moves each sum by an fp32 rounding's size, not across a kink the floor does not reach:
            # the plain floor's σ, and one evaluation instead of three (its loops run one term at a time)
            centre = self.run(f"as {h.key()}", evaluate, self.model, self.inputs, h.arithmetic())
            result = (centre.output, self.sigma)
        else:
            centre, local = self.run(f"as {h.key()}", floor_of, self.model, self.inputs, runs=0, base=h.arithmetic(),
                                     scales=self.truth.scales, any_order=h.order == ANY_ORDER)  # fmt: skip
            if centre.flip_spread is not None:  # at their full size, not at the floor's multiple for the fp32 Model's
                local = torch.maximum(local, centre.flip_spread * (FLOOR_MULTIPLIER / self.floor))  # own error
            result = (centre.output, torch.maximum(self.sigma, local))
        if self.keep:
            self.kept[h.key()] = result
        return result

    def value(self, h: Rewrite) -> torch.Tensor:
        return self.y64 if h.plain else self.rewritten(h)[0]

    def scale(self, h: Rewrite) -> torch.Tensor:
        """σ of rewrite ``h`` as a side is measured against it (the floor's multiple of it is what it allows): for a
        reduced precision also the tensor cores' truncating accumulation, K/8 of plain fp32's σ (module docstring,
        step 3: fp32 ulps of the sums, not the format's, whose roundings of every result under autocast would make
        K/8 of them hold any output, zeros too)."""
        if h.plain:
            return self.sigma
        sigma = self.rewritten(h)[1]
        return sigma + (self.tensor_core / self.floor) * self.sigma if h.precision else sigma

    def measure_fits(self) -> FitTable:
        """Each side's fit to each rewrite; the second-line rewrites (``Rewrite.second_line``: TF32 with ties away
        from zero or truncated, the Model under autocast or in half precision) only where a side is left that no other
        rewrite re-creates: elsewhere they cannot change the verdict, and they would double the evaluations."""
        table = FitTable(self.rewrites)
        numbered = list(enumerate(self.rewrites, 1))
        for number, h in numbered:
            if not h.second_line:
                self._measure(table, number, h)
        self._reject_unlike_rounding(table)
        if table.side_left():
            for number, h in numbered:
                if h.second_line:
                    self._measure(table, number, h)
            self._reject_unlike_rounding(table)
        return table

    def _reject_unlike_rounding(self, table: FitTable) -> None:
        """For each side, the rewrite the judge would name, tested for a departure concentrated in a slice of the
        output (``concentration``), and for the candidate one that moves the whole output one way (``drift``):
        rounding does neither, so the rewrite does not re-create the side; the next one tested in its place, until
        one passes or none is left. Only the rewrite about to be named is tested: a test sorts the whole output per
        slicing, and a drift's spread may take Monte-Carlo runs of the rewrite's own."""
        for side in SIDES:
            while table.recreating(side):
                h = simplest(table, side)
                found, drift = self.concentration(side, h), None
                if found is None and side == "candidate":
                    drift = self.drift(h)
                if found is None and drift is None:
                    break
                why = {"concentrated": found.words} if found is not None else {"drift": drift.words}
                departing = found.departing if found is not None else self._drifting(h, drift)
                table.record(side, h, dataclasses.replace(table[side, h], departing=int(departing.sum()), **why))
                for record in self.records:
                    if record["side"] == side and record["hypothesis"] == h.key():
                        record.update(fits=False, **why)

    def drift(self, h: Rewrite) -> Drift | None:
        """How the candidate's departure from rewrite ``h`` moves the whole output one way beyond what rounding does
        (``drift``), None where it does not. Judged where the rewrite claims fp32 rounding or fast-math's
        approximations: plain fp32, an order of the sums, another formula, fast-math; not for a reduced precision
        (TF32 operands rounded with ties away from zero err one way by design). Rounding's spread comes from the plain
        floor's random-sign runs, or, where the rewrite's σ is its own (the any-order allowance, a formula,
        fast-math), from Monte-Carlo runs of that rewrite. What legitimate arithmetic may drift by is the floor's
        multiple of the fp32 Model's own drift and of the plain floor's one-sign runs' (every rounding one way: a
        constant such as 1/n rounded once is shared by all outputs, and x − mean magnifies it by mean/std), and of
        fast-math's approximations' one-sign runs for fast-math. Not judged with fewer runs than
        ``drift.LEAST_RUNS`` (a recheck of another trial: the trial analysed first was), nor where the candidate is
        the reference bit for bit."""
        if h.precision is not None or h.autocast or self.effort.runs < LEAST_RUNS or self.identical:
            return None
        key = h.key() if h.order == ANY_ORDER or h.form is not None or h.fast_math else "plain"
        if key not in self.drift_runs:
            self.drift_runs[key] = {}
            self.run(f"as {h.key()}, random-sign runs for its drift", floor_of, self.model, self.inputs,
                     runs=self.effort.runs, seed=self.seed, base=h.arithmetic(), scales=self.truth.scales,
                     any_order=h.order == ANY_ORDER, run_drifts=self.drift_runs[key])  # fmt: skip
        if h.key() not in self.found_drifts:
            one_way = self.drift_runs["plain"].get("one_sign", []) + self.drift_runs[key].get("approximations", [])
            legitimate = FLOOR_MULTIPLIER * torch.stack([self.own_drift, *(d.abs() for d in one_way)]).amax(0)
            self.found_drifts[h.key()] = drifting(self.sides["candidate"], self.value(h),
                                                  self.drift_runs[key].get("random", []), legitimate)  # fmt: skip
        return self.found_drifts[h.key()]

    @functools.cached_property
    def identical(self) -> bool:
        """Whether the two sides are equal bit for bit."""
        return compare.same_values(self.sides["reference"], self.sides["candidate"])

    def _drifting(self, h: Rewrite, drift: Drift) -> torch.Tensor:
        """The outputs where the candidate's drift from rewrite ``h`` shows (``drift.drifting_outputs``)."""
        return drifting_outputs(self.sides["candidate"], self.value(h), drift, self.scale(h))

    def concentration(self, side: str, h: Rewrite) -> Concentration | None:
        """Where ``side``'s departure from rewrite ``h`` is concentrated, None where it is not: in units of the plain
        floor's σ, but for a reduced format's rewrite, in its own (its roundings of each channel's weights and bias
        are a structure of their own). Not in an approximation's wider σ: a bug that plain fp32 sees in one channel
        must not pass because fast-math tanh's allowance dilutes it."""
        if (side, h.key()) not in self.concentrations:  # asked again for the candidate's closest when it is a bug
            least = self.base_units if math.isfinite(self.base_units) else 0.0
            scale = self.rewritten(h)[1] if h.precision else self.sigma
            own = compare.departures(self.fp32_output, self.y64, scale)
            found = concentration(compare.departures(self.sides[side], self.value(h), scale), least, own, self.floor)
            self.concentrations[(side, h.key())] = found
        return self.concentrations[(side, h.key())]

    def _measure(self, table: FitTable, number: int, h: Rewrite) -> None:
        self.say(f"re-creation {number} of {len(self.rewrites)}: {h.key()}")
        value, scale, limit = self.value(h), self.scale(h), self.floor
        lost = 0 if h.plain else int((~torch.isfinite(value) & torch.isfinite(self.y64)).sum())
        for side, values in self.sides.items():
            fit = compare.fit(values, value, scale, limit, fp32=(self.sigma, self.floor))
            if lost:  # an arithmetic that loses the numbers (softmax without its shift overflowing) explains nothing
                fit = dataclasses.replace(
                    fit,
                    unlike=(
                        f"{_LOSES} at {lost} outputs where the Model in fp64 has numbers: no tolerance admits that"
                    ),
                )
            if h.precision is not None:
                unlike = unlike_reduced(fit, table[side, Rewrite()])  # the spreads only where that lets it through
                unlike = unlike or unlike_size(*compare.departure_spreads(values, value, self.y64))
                fit = dataclasses.replace(fit, unlike=unlike)
            if h.whole:
                fit = dataclasses.replace(fit, unlike=fit.unlike or unlike_whole(values, h.precision))
            elif h.autocast and on_grid(value, h.precision):  # its last op ran in the format: so must the side's
                under = f"the Model under autocast, whose last op runs in {h.precision},"
                fit = dataclasses.replace(fit, unlike=fit.unlike or unlike_whole(values, h.precision, under))
            if h.order == ANY_ORDER:
                unlike = unlike_any_order(self._agreeing(values, table), values.numel())
                fit = dataclasses.replace(fit, unlike=unlike or self._beyond_named_orders(values, table))
            table.record(side, h, fit)
            self.records.append({
                "side": side, "hypothesis": h.key(), "causes": [k.value for k in h.kinds(side, self.ops)] or ["none"],
                "residual_units": fit.units, "limit_units": fit.limit, "outside": fit.outside, "fits": fit.fits,
            })  # fmt: skip

    def _agreeing(self, values: torch.Tensor, table: FitTable) -> dict[str, int]:
        """For plain fp32 and each named order of the sums: at how many outputs ``values`` is within one σ of it (at
        that resolution only the same order agrees; ``judge.unlike_any_order``)."""
        named = [g for g in table.tried() if g.plain or g.order not in (None, ANY_ORDER)]
        return {
            g.key(): values.numel() - int(compare.outside(values, self.value(g), self.sigma, 1.0).sum()) for g in named
        }

    def _beyond_named_orders(self, values: torch.Tensor, table: FitTable) -> str | None:
        """Why the any-order allowance is not ``values``' arithmetic, where it errs from the Model in fp64 by more
        than ``_ANY_ORDER_REACH`` × what its sums in every named order do (and than the fp32 Model's own error): an
        order threads arrive in (atomics) errs like another order, not many times more than the sequential one,
        whose partial sums are the largest a sum of same-signed terms has (Higham 2002, §4.2, the bound through
        Σ|s_k|). A mean divided by n − 1 over 16384 terms departs 24 × the sequential sum's error, inside the
        allowance's floor; no order makes it."""
        named = [g for g in table.tried() if g.order not in (None, ANY_ORDER)]
        if not named:
            return None
        reach = max(compare.fit(self.value(g), self.y64, self.sigma, math.inf).units for g in named)
        own = compare.fit(values, self.y64, self.sigma, math.inf).units
        base = self.base_units if math.isfinite(self.base_units) else 1.0
        if own <= _ANY_ORDER_REACH * max(reach, base, 1.0):
            return None
        return (
            f"it departs from the Model in fp64 by {own:.3g} units of σ, more than {_ANY_ORDER_REACH:g} × what its "
            f"sums in any named order do ({reach:.3g}): no order of the same sums errs that much more"
        )

    def unrecreated_reference(self, table: FitTable) -> str:
        """Why the reference is out of scope: no rewrite re-creates it (the closest named)."""
        closest = min(table.tried(), key=lambda h: (table["reference", h].outside, table["reference", h].units))
        f = table["reference", closest]
        if f.outside:
            why = f"{f.units:.3g} units of σ at worst, {f.outside} of {self.y64.numel()} outputs beyond {f.limit:.1f}"
        elif f.concentrated:  # within the floor everywhere: what else rejected it
            why = f"within its floor of {f.limit:.1f} units of σ, but its departure is concentrated in {f.concentrated}"
        else:
            why = f"within its floor of {f.limit:.1f} units of σ, but {f.unlike}"
        return (
            "fp_analysis cannot re-create this reference: no rewrite of its graph (TF32/bf16/fp16 operands on its "
            f"linear ops, another form of an activation, fast-math) re-creates its output (closest: {closest.key()}, "
            f"{why}); it may compute in an arithmetic fp_analysis does not model"
        )

    def _common(self) -> dict:
        """The fields of any verdict: each side against fp64, the rewrites tried, the floor, the ops."""
        floor = {
            "method": "monte_carlo",
            "runs": self.effort.runs,
            "unit": "σ: the spread of fp32-sized rounding errors carried through the Model (module docstring)",
            "baseline_units": self.base_units,
            "floor_units": self.floor,
            "tensor_core_units": self.tensor_core,
            "outputs": int(self.y64.numel()),
        }
        return {
            "candidate_vs_fp64": error_stats(self.sides["candidate"], self.y64).to_dict(),
            "reference_vs_fp64": error_stats(self.sides["reference"], self.y64).to_dict(),
            "hypotheses": self.records,
            "floor": floor,
            "ops": [o.to_dict() | {"description": describe_op(self.ops, o.index)} for o in self.ops],
        }

    def _tolerance(self, r: Rewrite, c: Rewrite | None, table: FitTable) -> dict:
        """The atol the re-created reference ``r`` and candidate ``c`` (None: fp32-exact, the Model in fp64) need."""
        c_value, c_scale = (self.y64, self.sigma) if c is None else (self.value(c), self.scale(c))
        c_limit = self.floor if c is None else table["candidate", c].limit
        return compare.tolerance(self.value(r), c_value, self.scale(r), c_scale, table["reference", r].limit, c_limit,
                                 [r.key(), "plain" if c is None else c.key()])  # fmt: skip

    def explained(self, table: FitTable) -> Analysis:
        """The analysis where both sides are re-created: the judge's causes, each with its evidence."""
        r, c = simplest(table, "reference"), simplest(table, "candidate")
        twins = {}
        if r.plain and c.plain and self.effort.twin_samples:
            twins = twin_evidence(self.model, self.ops, self.inputs, self.sides, self.effort.twin_samples, self.seed)
        self.records += [
            {"side": side, "hypothesis": "plain", "causes": ["none"], "twin": name, "residual_units": 0.0,
             "bitwise_equal": True, "fits": True}
            for side, name in twins.items()
        ]  # fmt: skip
        judgement = judge_explained(r, c, self.identical, self.ops)
        causes = [self._evidence(kind, side, h, table, twins) for kind, side, h in judgement.causes]
        return Analysis(explained=True, verdict=judgement.verdict, causes=causes,
                        recommended_tolerance=self._tolerance(r, c, table), location={},
                        recreations={"reference": r.key(), "candidate": c.key()}, **self._common())  # fmt: skip

    def _evidence(self, kind, side: str, h: Rewrite | None, table: FitTable, twins: dict) -> Cause:
        """The cause ``kind`` on ``side`` with its evidence in words and numbers."""
        if side == "both":  # shared_<fmt>: equal only because both are inexact alike
            change = h.changes(self.ops)[0]
            exact = self._tolerance(h, None, table)
            distance = compare.max_abs(self.sides["reference"], self.y64)
            return Cause(
                kind.value,
                f"the two sides are equal bit for bit only because both compute {change.what}: each is "
                f"{distance:.3g} from the Model in fp64; an fp32-exact kernel would need atol ≈ {exact['atol']:.3g} "
                "against this reference",
                distance, "both", table["reference", h].units, change.where,
            )  # fmt: skip
        if side == "pair":  # accumulation_order, or formula where the Model sums nothing
            ref, cand = table["reference", Rewrite()].units, table["candidate", Rewrite()].units
            how = (
                "the same fp32 arithmetic in another order"
                if kind is CauseKind.ACCUMULATION_ORDER
                else "the same elementwise function by another fp32 formula or library routine (the Model sums nothing)"
            )
            return Cause(
                kind.value,
                f"both sides stay within the fp32 floor of the Model in fp64 (reference {ref:.1f}, candidate "
                f"{cand:.1f} ≤ {self.floor:.1f} units of σ) but differ bitwise: {how}" + twin_words(twins, self.sides),
                compare.max_abs(self.sides["reference"], self.sides["candidate"]), "pair", max(ref, cand),
            )  # fmt: skip
        change = next(ch for ch in h.changes(self.ops) if ch.kind(side) is kind)
        fit, plain = table[side, h], table[side, Rewrite()]
        return Cause(
            kind.value,
            f"re-creating {change.what} leaves a residual of {fit.units:.3g} units of σ on the {side} "
            f"(floor {fit.limit:.1f}); plain fp32 arithmetic would leave {plain.units:.3g}"
            + self._alike(side, h, table)
            + (self._catastrophic(h) if kind is CauseKind.FORMULA else ""),
            compare.max_abs(self.sides[side], self.value(h)), side, fit.units, change.where,
        )  # fmt: skip

    def _catastrophic(self, h: Rewrite) -> str:
        """Words for a formula whose own error is far past the fp32 floor: ``_CATASTROPHIC`` times the floor or more is
        cancellation (a one-pass variance of values whose mean dwarfs their spread), not rounding; each factor of 2
        past the floor is a bit lost."""
        far = compare.fit(self.value(h), self.y64, self.sigma, math.inf).units
        if not far >= _CATASTROPHIC * self.floor:
            return ""
        times = far / self.floor
        bits = f"about {math.log2(times):.0f} bits" if math.isfinite(times) else "every bit"
        return (
            f"; catastrophic: the formula itself is {far:.3g} units of σ from the Model in fp64, {times:.3g} times "
            f"the fp32 floor ({bits} lost to cancellation): the reference's formula is the accurate one, and a "
            "tolerance that admits this one admits errors of that size"
        )

    def _alike(self, side: str, h: Rewrite, table: FitTable) -> str:
        """Words for a TF32 re-creation that fp16 gives bit for bit too (or the reverse): both keep 10 bits of
        mantissa, so operands inside fp16's range round alike and the output cannot tell the two apart."""
        twin = {"tf32": "fp16", "fp16": "tf32"}.get(h.precision)
        other = dataclasses.replace(h, precision=twin, ties="rne") if twin else None
        if other is None or h.ties != "rne" or other.key() not in {r.key() for r in table.recreating(side)}:
            return ""
        if not torch.equal(self.value(h), self.value(other)):
            return ""
        return (
            f"; {twin} re-creates it bit for bit too (every operand inside fp16's range rounds alike in both): the "
            "output cannot tell TF32 from fp16 here, and TF32 is named as the usual reason (a tensor core's "
            "default)"
        )

    def _departing(self, h: Rewrite, table: FitTable):
        """(where the candidate departs from rewrite ``h``, the concentration or drift that says so where it is within
        the limit everywhere)."""
        fit = table["candidate", h]
        found = self.concentration("candidate", h) if fit.within else None
        if found is not None:
            return found.departing.to(self.sides["candidate"].device), found
        drift = self.drift(h) if fit.within else None
        if drift is not None:
            return self._drifting(h, drift), drift
        return compare.outside(self.sides["candidate"], self.value(h), self.scale(h), fit.limit), None

    def unexplained(self, table: FitTable) -> Analysis:
        """The analysis where no rewrite re-creates the candidate: ``bug`` or ``nonfinite``, located."""
        closest = closest_to_candidate(table)
        fit = table["candidate", closest]
        value, candidate = self.value(closest), self.sides["candidate"]
        bad, found = self._departing(closest, table)
        nonfinite = bad & ~torch.isfinite(candidate) & torch.isfinite(value)
        # within the floor, the outputs counted are those of the slices above the level the rest never reaches
        how = (
            "beyond the floor" if found is None
            else "departing one way" if isinstance(found, Drift)
            else "departing beyond what the rest of the output does"
        )  # fmt: skip
        location = locate(bad, nonfinite, tuple(self.y64.shape), how)
        kind = judge_unexplained(int(bad.sum()), int(nonfinite.sum()))
        label = " + ".join(k.value for k in closest.kinds("candidate", self.ops)) or "plain fp32"
        departure = compare.max_abs(candidate, value)
        # by how much in absolute terms: in units of σ the number is astronomic where σ is at its least (an
        # output a ReLU or clamp makes exactly 0), which says nothing a user can act on
        by = "non-finite where it has numbers" if departure is None else f"up to {departure:.3g} from it"
        if found is not None:
            why = (
                "rounding errs in random directions, and over this many outputs cancels in any one"
                if isinstance(found, Drift)
                else "rounding errs alike over the whole output"
            )
            evidence = (
                f"the candidate stays within the floor of a re-creation of its arithmetic (closest: {label}, {by}) "
                f"but {found.words}: {why}, so no arithmetic does this; {location['summary']}"
            )
        else:
            evidence = (
                f"the candidate departs from every re-creation of its arithmetic (closest: {label}, {by}, beyond the "
                f"floor of {fit.limit:.1f} units of σ); {location['summary']}"
            )
        evidence += self._losing(table)
        cause = Cause(kind.value, evidence, departure, "candidate", fit.units)
        tolerance = self._tolerance(simplest(table, "reference"), None, table)
        return Analysis(explained=False, verdict=kind.value, causes=[cause], recommended_tolerance=tolerance,
                        location=location, **self._common())  # fmt: skip

    def _losing(self, table: FitTable) -> str:
        """Words for a candidate that a re-creation holds but for the numbers it loses (softmax without its shift
        overflowing to NaN): that arithmetic is the candidate's, and it is wrong there."""
        for h in table.tried():
            fit = table["candidate", h]
            if fit.outside == 0 and fit.unlike and fit.unlike.startswith(_LOSES):
                change = h.changes(self.ops)[0].what
                return f"; re-creating {change} gives these values, NaN and ±inf too: {fit.unlike}"
        return ""


def _check_shapes(truth: torch.Tensor, reference: torch.Tensor, candidate: torch.Tensor) -> None:
    if tuple(reference.shape) != tuple(truth.shape) or tuple(candidate.shape) != tuple(truth.shape):
        raise OutOfScopeError(
            f"the Model's output {tuple(truth.shape)} in fp64 does not have the shape of the outputs compared "
            f"(reference {tuple(reference.shape)}, candidate {tuple(candidate.shape)})"
        )
    if truth.numel() == 0:
        raise OutOfScopeError(f"the Model's output {tuple(truth.shape)} is empty: there is nothing to compare")
