"""Explaining a mismatch on a whole Model: which arithmetic re-creates each side, or where the candidate is wrong.

The reference Model is the graph it runs (``fp_analysis.model.interpose``). ``analyse_model``:

1. **Evaluates it** as PyTorch does in fp32 (the baseline arithmetic) and in fp64 (the truth, recording each
   linear op's Σ|w·x|), and refuses what it cannot model (``OutOfScopeError``, exit 2): no linear op, random
   draws in forward, a path in fp64 other than in fp32 (control flow that depends on the data), an op that
   fails in fp64.
2. **Measures the floor.** σ is the spread of ``runs`` Monte-Carlo evaluations in fp64 in which every op's
   result carries a rounding error of fp32 size in a random direction (``interpose.Noise``): ±u·Σ|w·x| at a
   linear op (the scale of an fp32 dot product's error, Higham 2002 §3.1), ±u·(|f(x)| + |x|) at an activation
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
3. **Re-creates each side** by rewriting the reference graph, one change at a time (``_hypotheses``): the
   linear ops' operands in TF32/bf16/fp16 (all of them, the convolutions or the matrix products apart, each
   op alone), rounded to nearest with ties to even, and for TF32 also with ties away from zero where a side
   is left over (PTX's cvt.rna: cuDNN's implicit-GEMM TF32 convolutions round so, the CUTLASS GEMM of a 1×1
   conv to even; experiments/results/tf32_probe_h200.json); another form of one activation (``interpose.FORMS``);
   fast-math transcendentals (σ measured again with transcendental ops carrying 133 ulp, tanhf's worst under
   --use_fast_math, experiments/results/gpu_validation.json); precisions with forms. A side is re-created by
   a rewrite when it stays within the floor of it at every output; a precision rewrite may also leave the tensor cores'
   truncating fp32 accumulation, about half an ulp per mma step of 8 products (Fasi, Higham, Mikaitis &
   Pranesh 2021, PeerJ Comput. Sci. 7:e330): K/8 more units.
4. **Decides.** Both sides re-created: their causes, each naming the op it acts on; ``identical`` or
   ``accumulation_order`` when both are plain fp32; a ``shared_<fmt>`` cause when they agree bit for bit
   only because both are inexact the same way, with the tolerance an fp32-exact kernel would need against
   that reference. The reference not re-created: out of scope (exit 2), never a verdict. The candidate not
   re-created: ``nonfinite`` (NaN/±inf where the closest re-creation has numbers) or ``bug``, located over
   all outputs (channels, batch items, edges, with counts that add up).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np
import torch

from ..errors import OutOfScopeError
from ..numerics.backends import tf32
from ..numerics.formats import FORMATS
from ..numerics.memory import format_bytes
from ..numerics.metrics import error_stats
from .interpose import DATA_MOVES, FORMS, Arithmetic, Noise, OpKind, OpRecord, describe_op, evaluate
from .verdict import Cause

__all__ = [
    "FAST_MATH_ULPS",
    "FLOOR_MULTIPLIER",
    "ModelAnalysis",
    "analyse_model",
    "floor_of",
    "locate",
    "twin_evidence",
]

FLOOR_MULTIPLIER = 8.0  # see the module docstring, step 2
# The tolerance is measured on one trial's inputs; on KernelBench's other trials (same distribution) the
# largest difference moved by 1.2% on the tests' TF32 case. 1.5 keeps a wide margin over that, as the seed
# analysis's measured tolerance did.
TOLERANCE_MARGIN = 1.5
# tanhf under --use_fast_math: up to 133 ulp (experiments/results/gpu_validation.json, fast_math_probe).
FAST_MATH_ULPS = 133.0
_PRECISIONS = ("tf32", "bf16", "fp16")
_SINGLE_OP_HYPOTHESES = 3  # at most this many linear ops get a precision rewrite of their own
# η: half the fp32 subnormal spacing, the least any fp32 result can be off by; σ is at least K·η (floor_of).
_SIGMA_MIN = math.ldexp(1.0, -150)
_FORMAT_NAMES = {"tf32": "TF32", "bf16": "bf16", "fp16": "fp16"}
# The two tie rules of round-to-nearest a kernel's fp32 → TF32 conversion uses: PTX's cvt.rna.tf32.f32 rounds
# ties away from zero, and cuDNN's implicit-GEMM TF32 convolutions on the H200 agree with it and not with
# ties-to-even (experiments/results/tf32_probe_h200.json: 180 units of σ from ties-to-even on a 3×3 conv with
# K = 288, where one operand tie moves an output by 2^13/K units of its mean term).
_TIES = {"rne": "to nearest, ties to even", "rna": "to nearest, ties away from zero, as cvt.rna.tf32.f32"}
_U32 = FORMATS["fp32"].unit_roundoff
_KEEP_BYTES = 2 * 10**9  # rewrites' values and σ held at most (see analyse_model)
_CHUNK = 1 << 22  # outputs compared at a time: the temporaries of a comparison stay ~100 MB


@dataclasses.dataclass(frozen=True)
class _Hypothesis:
    """One rewrite of the reference graph (see the module docstring, step 3)."""

    precision: str | None = None  # format of the rounded linear ops' operands
    linear_ops: tuple[int, ...] | None = None  # which linear ops (None: all)
    convolutions_only: bool = False
    form: tuple[int, str] | None = None  # (op index, form name)
    fast_math: bool = False
    ties: str = "rne"  # how the operands' ties round: "rne" (to even) or "rna" (away from zero)

    def arithmetic(self) -> Arithmetic:
        return Arithmetic(
            linear_format=self.precision,
            linear_rounding=self.ties,
            linear_ops=None if self.linear_ops is None else frozenset(self.linear_ops),
            convolutions_only=self.convolutions_only,
            forms={} if self.form is None else {self.form[0]: self.form[1]},
        )

    @property
    def plain(self) -> bool:
        return self.precision is None and self.form is None and not self.fast_math

    def causes(self, side: str, ops: Sequence[OpRecord]) -> list[tuple[str, str, str]]:
        """(cause name, what it re-creates, the op it acts on) for each change this rewrite makes."""
        out = []
        if self.precision is not None:
            acted = self._linear(ops)
            where = describe_op(ops, acted[0]) if len(acted) == 1 else f"{len(acted)} {self._which()}"
            out.append(
                (
                    f"{side}_{self.precision}",
                    f"the operands of {where} rounded to {_FORMAT_NAMES[self.precision]} ({_TIES[self.ties]})",
                    where,
                )
            )
        if self.form is not None:
            index, form = self.form
            what, where = FORMS[ops[index].name][form][0], describe_op(ops, index)
            name = "gelu_approximation" if ops[index].name == "gelu" else "approximation"
            out.append((name, f"{where} computed as {what}", where))
        if self.fast_math:
            out.append(
                (
                    "approximation",
                    f"fast-math transcendentals (tanhf, expf, erff, division, square root: up to "
                    f"{FAST_MATH_ULPS:.0f} ulp, as --use_fast_math computes them)",
                    "every transcendental op",
                )
            )
        return out

    def _linear(self, ops: Sequence[OpRecord]) -> list[int]:
        if self.linear_ops is not None:
            return list(self.linear_ops)
        return [
            o.index for o in ops if o.kind is OpKind.LINEAR and (not self.convolutions_only or o.name == "convolution")
        ]

    def _which(self) -> str:
        return "convolutions" if self.convolutions_only else "linear ops (convolutions and matrix products)"

    def key(self) -> str:
        parts = []
        if self.precision:
            scope = "all" if self.linear_ops is None else ",".join(map(str, self.linear_ops))
            ties = "" if self.ties == "rne" else f"~{self.ties}"
            parts.append(f"{self.precision}{ties}[{'conv' if self.convolutions_only else scope}]")
        if self.form:
            parts.append(f"{self.form[1]}@{self.form[0]}")
        if self.fast_math:
            parts.append("fast_math")
        return "+".join(parts) or "plain"


@dataclasses.dataclass
class ModelAnalysis:
    """What ``analyse_model`` found; ``fp_analysis.explain.job`` turns it into the ``Explanation`` record."""

    explained: bool
    verdict: str
    causes: list[Cause]
    candidate_vs_fp64: dict
    reference_vs_fp64: dict
    tolerance: dict
    hypotheses: list[dict]
    floor: dict
    ops: list[dict]
    location: dict
    # side → the rewrite that re-creates it ("plain", "tf32 on all linear ops"...), where the verdict is explained:
    # another trial of the same candidate is judged against these alone (``analyse_model(only=...)``)
    recreations: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class _Fit:
    """How far one side is from one re-creation."""

    units: float  # the largest departure, in units of σ (inf where one side is non-finite and the other not)
    outside: int  # outputs beyond the limit
    limit: float

    @property
    def fits(self) -> bool:
        return self.outside == 0


def floor_of(
    model: torch.nn.Module,
    inputs: Sequence,
    *,
    runs: int = 8,
    seed: int = 0,
    fast_math: bool = False,
    base: Arithmetic | None = None,
    scales: dict | None = None,
):
    """(evaluation, σ): the Model under ``base`` (fp64 by default) and the Monte-Carlo spread of fp32 rounding
    around it (module docstring, step 2): two runs with every error one way, then ``runs`` with random signs.
    With ``fast_math`` transcendental ops carry ``FAST_MATH_ULPS`` ulp. ``scales`` (each linear op's Σ|w·x|)
    come from the fp64 evaluation unless given."""
    base = base or Arithmetic()
    centre = evaluate(model, inputs, base, record_scales=scales is None)
    scales = centre.scales if scales is None else scales
    device = centre.output.device
    generator = torch.Generator(device=device).manual_seed(seed)
    sigma = torch.zeros_like(centre.output)
    ulps = FAST_MATH_ULPS if fast_math else 1.0
    for sign in [+1, -1] + [None] * runs:
        noise = Noise(generator, scales, ulps, sign, FLOOR_MULTIPLIER)
        run = evaluate(model, inputs, dataclasses.replace(base, noise=noise))
        sigma = torch.maximum(sigma, (run.output - centre.output).abs().nan_to_num(0.0, 0.0, 0.0) / FLOOR_MULTIPLIER)
    # No fp32 result is closer than half an ulp of itself: a clamp bound or a constant of the Model rounded to
    # fp32 moves an output that nothing upstream can move (σ = 0 there otherwise).
    own = (_U32 * centre.output.abs()).nan_to_num(0.0, 0.0, 0.0)
    # Near underflow each of a K-term sum's roundings errs by up to η = 2^-150 absolute (Higham 2002, §2.1, eq.
    # (2.8)), whatever order: a kernel that folds a multiplier into the weights rounds K subnormal products
    # where the Model rounds one.
    terms = max((o.terms for o in centre.ops if o.kind is OpKind.LINEAR), default=1)
    return centre, torch.maximum(sigma, own).clamp_min(max(1, terms) * _SIGMA_MIN)


def analyse_model(
    model: torch.nn.Module,
    inputs: Sequence,
    reference: torch.Tensor,
    candidate: torch.Tensor,
    *,
    runs: int = 8,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
    twin_samples: int = 2000,
    watch: Callable[[str], contextlib.AbstractContextManager] | None = None,
    only: frozenset[str] | None = None,
) -> ModelAnalysis:
    """The causes of ``candidate`` ≠ ``reference`` on ``inputs`` (see the module docstring).

    ``reference`` is what the reference Model returned in the check (its default precision), ``candidate``
    what the candidate returned on the same inputs; both on the Model's device. The baseline is the Model in
    plain fp32 (on a GPU, cuDNN's and cuBLAS's TF32 off), so fpa explain and fpa fuzz judge alike. ``twin_samples``
    outputs are compared with the CPU twins of cuDNN's fp32 order where the Model is one convolution.
    ``watch(where)`` wraps each evaluation of the Model (the worker reports it, so the timeout applies).
    An evaluation that fails is out of scope (``OutOfScopeError`` with what failed). ``only``: the rewrites to try
    (their keys; plain fp32 is always tried): where another trial's analysis found what re-creates each side, a
    trial of the same candidate is judged against that alone, at a fraction of the evaluations.
    """
    say = progress or (lambda text: None)
    guard = watch or (lambda where: contextlib.nullcontext())

    def run(what: str, fn, *args, **kwargs):
        with guard(f"Model.forward ({what}, for the analysis)"):
            try:
                return fn(*args, **kwargs)
            except OutOfScopeError:
                raise
            except Exception as error:
                raise OutOfScopeError(
                    f"the Model cannot be evaluated {what}: {type(error).__name__}: {str(error)[:300]}"
                ) from None

    say("the Model in fp32")
    started = time.monotonic()
    as_fp32 = run("in fp32", _checked_fp32, model, inputs)
    evaluations = _evaluations(as_fp32.ops, runs)
    outputs = as_fp32.output.numel()
    say(
        f"up to {evaluations} evaluations of the Model in fp64 to come (the truth, {runs + 2} Monte-Carlo runs, the "
        f"rewrites); the fp32 one took {time.monotonic() - started:.1f} s; about "
        f"{format_bytes(outputs * 8 * (4 + 2 * len(_hypotheses(as_fp32.ops))))} of outputs held at most"
    )
    truth, sigma = run("in fp64", floor_of, model, inputs, runs=runs, seed=seed)
    ops = truth.ops
    path32, path64 = _path(as_fp32.ops), _path(ops)
    if path32 != path64:
        first = next(i for i, (a, b) in enumerate(zip([*path32, "(end)"], [*path64, "(end)"], strict=False)) if a != b)
        at32, at64 = [*path32, "(end)"][first], [*path64, "(end)"][first]
        raise OutOfScopeError(
            f"the Model's forward takes another path in fp64 than in fp32 (computing op {first}: {at32} in fp32, "
            f"{at64} in fp64): control flow that depends on the values cannot be re-created"
        )
    y64 = truth.output
    _check_shapes(y64, reference, candidate)
    base_units = _fit(as_fp32.output.to(y64.dtype), y64, sigma, math.inf).units
    floor = FLOOR_MULTIPLIER * max(1.0, base_units if math.isfinite(base_units) else 1.0)
    tensor_core = max((o.terms for o in ops if o.kind is OpKind.LINEAR), default=0) / 8
    sides = {"reference": reference, "candidate": candidate}  # as they are: compared chunk by chunk in fp64

    hypotheses = [h for h in _hypotheses(ops) if only is None or h.plain or h.key() in only]
    fits: dict[tuple[str, str], _Fit] = {}
    # The rewrites' values and σ, kept while they are small; past ``_KEEP_BYTES`` the few needed at the end
    # are evaluated again rather than every one held (a full-size output is a GB in fp64).
    keep = y64.numel() * y64.element_size() * 2 * len(hypotheses) <= _KEEP_BYTES
    kept: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
    records = []
    fast_sigma = None

    def rewrite(h: _Hypothesis) -> tuple[torch.Tensor, torch.Tensor]:
        """(value, σ) of a precision or form rewrite: σ around it too, since rounding the operands can carry
        an output across a kink (a ReLU, a clamp) that the rounding around the fp64 truth cannot reach."""
        if h.key() in kept:
            return kept[h.key()]
        centre, local = run(f"as {h.key()}", floor_of, model, inputs, runs=0, base=h.arithmetic(), scales=truth.scales)
        result = (centre.output, torch.maximum(sigma, local))
        if keep:
            kept[h.key()] = result
        return result

    def attempt(number: int, h: _Hypothesis) -> None:
        nonlocal fast_sigma
        say(f"re-creation {number} of {len(hypotheses)}: {h.key()}")
        if h.fast_math:
            _, fast_sigma = run(
                "with fast-math rounding", floor_of, model, inputs, runs=runs, seed=seed + 1, fast_math=True
            )
            value, scale, limit = y64, fast_sigma, floor
        elif h.plain:
            value, scale, limit = y64, sigma, floor
        else:
            value, scale = rewrite(h)
            limit = floor + (tensor_core if h.precision else 0.0)
        for side, values in sides.items():
            fit = _fit(values, value, scale, limit)
            fits[(side, h.key())] = fit
            records.append(
                {
                    "side": side,
                    "hypothesis": h.key(),
                    "causes": [c[0] for c in h.causes(side, ops)] or ["none"],
                    "residual_units": fit.units,
                    "limit_units": fit.limit,
                    "outside": fit.outside,
                    "fits": fit.fits,
                }
            )

    numbered = list(enumerate(hypotheses, 1))
    for number, h in numbered:
        if h.ties == "rne":
            attempt(number, h)
    # TF32 with ties away from zero (cuDNN's implicit-GEMM convolutions, _TIES) only where a side is left that
    # no other rewrite re-creates: elsewhere it cannot change the verdict, and it doubles the TF32 rewrites.
    if any(not any(f.fits for (s, _), f in fits.items() if s == side) for side in sides):
        for number, h in numbered:
            if h.ties != "rne":
                attempt(number, h)
    floor_record = {
        "method": "monte_carlo",
        "runs": runs,
        "unit": "σ: the spread of fp32-sized rounding errors carried through the Model (module docstring)",
        "baseline_units": base_units,
        "floor_units": floor,
        "tensor_core_units": tensor_core,
        "outputs": int(y64.numel()),
    }
    ref_stats = error_stats(reference, y64).to_dict()
    cand_stats = error_stats(candidate, y64).to_dict()
    op_records = [o.to_dict() | {"description": describe_op(ops, o.index)} for o in ops]

    tried = [h for h in hypotheses if ("reference", h.key()) in fits]

    def fitting(side):
        return [h for h in tried if fits[(side, h.key())].fits]

    ref_fits, cand_fits = fitting("reference"), fitting("candidate")
    if not ref_fits:
        closest = min(tried, key=lambda h: (fits[("reference", h.key())].outside, fits[("reference", h.key())].units))
        f = fits[("reference", closest.key())]
        raise OutOfScopeError(
            "fp_analysis cannot re-create this reference: no rewrite of its graph (TF32/bf16/fp16 operands on its "
            f"linear ops, another form of an activation, fast-math) comes within the floor of its output (closest: "
            f"{closest.key()}, {f.units:.3g} units of σ at worst, {f.outside} of {y64.numel()} outputs beyond "
            f"{f.limit:.1f}); it may compute in an arithmetic fp_analysis does not model"
        )

    def value_of(h: _Hypothesis) -> torch.Tensor:
        return y64 if (h.plain or h.fast_math) else rewrite(h)[0]

    def scale_of(h: _Hypothesis) -> torch.Tensor:
        return fast_sigma if h.fast_math else sigma if h.plain else rewrite(h)[1]

    def pick(fitting_hypotheses, side):
        # Plain first; then the fewest changes; then an exact re-creation before fast-math's looser allowance;
        # then TF32 before bf16 before fp16 (operands inside fp16's range round alike in TF32 and fp16, and a
        # TF32 tensor core is the usual reason); then the closest.
        return min(
            fitting_hypotheses,
            key=lambda h: (
                not h.plain,
                len(h.causes(side, ops)),
                h.fast_math,
                _PRECISIONS.index(h.precision) if h.precision else -1,
                h.ties != "rne",
                fits[(side, h.key())].units,
            ),
        )

    if cand_fits:
        r, c = pick(ref_fits, "reference"), pick(cand_fits, "candidate")
        causes = []
        for side, h in (("reference", r), ("candidate", c)):
            values = sides[side]
            for name, what, where in h.causes(side, ops):
                fit = fits[(side, h.key())]
                plain = fits[(side, "plain")]
                causes.append(
                    Cause(
                        name,
                        f"re-creating {what} leaves a residual of {fit.units:.3g} units of σ on the {side} "
                        f"(floor {fit.limit:.1f}); plain fp32 arithmetic would leave {plain.units:.3g}",
                        _max_abs(values, value_of(h)),
                        side,
                        fit.units,
                        where,
                    )
                )
        identical = _same_values(sides["reference"], sides["candidate"])
        twins = twin_evidence(model, ops, inputs, sides, twin_samples, seed) if r.plain and c.plain else {}
        records += [
            {"side": side, "hypothesis": "plain", "causes": ["none"], "twin": name, "residual_units": 0.0,
             "bitwise_equal": True, "fits": True}
            for side, name in twins.items()
        ]  # fmt: skip
        shared = identical and r.precision is not None and r == c
        if shared:
            name, what, where = r.causes("both", ops)[0]
            exact = _tolerance(
                value_of(r), y64, scale_of(r), sigma, fits[("reference", r.key())].limit, floor, [r.key(), "plain"]
            )
            distance = _max_abs(sides["reference"], y64)
            causes = [
                Cause(
                    f"shared_{r.precision}",
                    f"the two sides are equal bit for bit only because both compute {what}: each is {distance:.3g} "
                    f"from the Model in fp64; an fp32-exact kernel would need atol ≈ {exact['atol']:.3g} against "
                    "this reference",
                    distance,
                    "both",
                    fits[("reference", r.key())].units,
                    where,
                )
            ]
        elif not causes and not identical:
            causes.append(
                Cause(
                    "accumulation_order",
                    f"both sides stay within the fp32 floor of the Model in fp64 (reference "
                    f"{fits[('reference', 'plain')].units:.1f}, candidate {fits[('candidate', 'plain')].units:.1f} ≤ "
                    f"{floor:.1f} units of σ) but differ bitwise: the same fp32 arithmetic in another order"
                    + _twin_words(twins, sides),
                    _max_abs(sides["reference"], sides["candidate"]),
                    "pair",
                    max(fits[("reference", "plain")].units, fits[("candidate", "plain")].units),
                )
            )
        verdict = (
            "identical" if identical and not causes else ("identical" if shared else " + ".join(x.name for x in causes))
        )
        tolerance = _tolerance(
            value_of(r), value_of(c), scale_of(r), scale_of(c), fits[("reference", r.key())].limit,
            fits[("candidate", c.key())].limit, [r.key(), c.key()],
        )  # fmt: skip
        return ModelAnalysis(
            True, verdict, causes, cand_stats, ref_stats, tolerance, records, floor_record, op_records, {},
            {"reference": r.key(), "candidate": c.key()},
        )  # fmt: skip

    closest = min(
        tried,
        key=lambda h: (
            fits[("candidate", h.key())].outside,
            len(h.causes("c", ops)),
            fits[("candidate", h.key())].units,
        ),
    )  # the fewest outputs left out, then the simplest rewrite: a bug in one channel is "plain fp32 elsewhere"
    fit = fits[("candidate", closest.key())]
    scale, value = scale_of(closest), value_of(closest)
    bad = _outside(sides["candidate"], value, scale, fit.limit)
    nonfinite = bad & ~torch.isfinite(sides["candidate"]) & torch.isfinite(value)
    location = locate(bad, nonfinite, tuple(y64.shape))
    name = "nonfinite" if int(nonfinite.sum()) == int(bad.sum()) else "bug"
    label = " + ".join(c[0] for c in closest.causes("candidate", ops)) or "plain fp32"
    departure = _max_abs(sides["candidate"], value)
    # by how much in absolute terms: in units of σ the number is astronomic where σ is at its least (an
    # output a ReLU or clamp makes exactly 0), which says nothing a user can act on
    by = "non-finite where it has numbers" if departure is None else f"up to {departure:.3g} from it"
    evidence = (
        f"the candidate departs from every re-creation of its arithmetic (closest: {label}, {by}, beyond the "
        f"floor of {fit.limit:.1f} units of σ); {location['summary']}"
    )
    cause = Cause(name, evidence, departure, "candidate", fit.units)
    r = pick(ref_fits, "reference")
    tolerance = _tolerance(
        value_of(r), y64, scale_of(r), sigma, fits[("reference", r.key())].limit, floor, [r.key(), "plain"]
    )
    return ModelAnalysis(
        False, name, [cause], cand_stats, ref_stats, tolerance, records, floor_record, op_records, location
    )


def _evaluations(ops: Sequence[OpRecord], runs: int) -> int:
    """How many times ``analyse_model`` evaluates the Model after its fp32 run at most (the estimate it says);
    a ties-away TF32 rewrite runs only where a side is left that no other rewrite re-creates."""
    hypotheses = _hypotheses(ops)
    rewrites = sum(1 for h in hypotheses if not h.plain and not h.fast_math)
    fast = sum(1 for h in hypotheses if h.fast_math)
    return (1 + 2 + runs) * (1 + fast) + 3 * rewrites


def _path(ops: Sequence[OpRecord]) -> list[str]:
    """The ops that compute, in order: the path a forward takes, whatever copies its memory layout needs."""
    return [o.name for o in ops if o.name not in DATA_MOVES]


def _checked_fp32(model, inputs) -> object:
    """The Model in plain fp32 through the interposer (its ops recorded), checked to be within scope."""
    try:
        with tf32(conv=False, matmul=False):  # plain fp32 is the baseline: on a GPU, cuDNN's and cuBLAS's TF32 off
            as_fp32 = evaluate(model, inputs, Arithmetic(dtype=torch.float32))
    except TypeError as error:
        raise OutOfScopeError(str(error)) from None
    random = [o for o in as_fp32.ops if o.kind is OpKind.RANDOM]
    if random:
        raise OutOfScopeError(
            f"the Model draws random numbers in forward ({describe_op(as_fp32.ops, random[0].index)}: "
            f"{random[0].name}): there is no one output to explain; put dropout in eval mode or set p = 0"
        )
    if not any(o.kind is OpKind.LINEAR for o in as_fp32.ops):
        raise OutOfScopeError(
            "the Model runs no convolution or matrix product (torch.nn.Conv*/ConvTranspose*, Linear, matmul): "
            "fp_analysis explains the precision of linear ops and what follows them"
        )
    if not as_fp32.output.is_floating_point():
        raise OutOfScopeError(f"the Model returns {as_fp32.output.dtype}, not floating-point values")
    return as_fp32


def _check_shapes(truth: torch.Tensor, reference: torch.Tensor, candidate: torch.Tensor) -> None:
    if tuple(reference.shape) != tuple(truth.shape) or tuple(candidate.shape) != tuple(truth.shape):
        raise OutOfScopeError(
            f"the Model's output {tuple(truth.shape)} in fp64 does not have the shape of the outputs compared "
            f"(reference {tuple(reference.shape)}, candidate {tuple(candidate.shape)})"
        )
    if truth.numel() == 0:
        raise OutOfScopeError(f"the Model's output {tuple(truth.shape)} is empty: there is nothing to compare")


def _difference(values: torch.Tensor, recreation: torch.Tensor) -> torch.Tensor:
    """|values − recreation|: 0 where both are equal (the same ±inf, NaN on both), inf where only one is finite."""
    same = (values == recreation) | (torch.isnan(values) & torch.isnan(recreation))
    difference = (values - recreation).abs()
    return torch.where(same, torch.zeros_like(difference), difference.nan_to_num(math.inf, math.inf, math.inf))


def _chunks(*tensors):
    """The tensors flattened, ``_CHUNK`` outputs at a time, in fp64."""
    flat = [t.reshape(-1) for t in tensors]
    for start in range(0, flat[0].numel(), _CHUNK):
        yield tuple(t[start : start + _CHUNK].to(torch.float64) for t in flat)


def _outside(values, recreation, scale, limit) -> torch.Tensor:
    """Where ``values`` departs from ``recreation`` by more than ``limit`` units of ``scale`` (a bool per output)."""
    parts = [_difference(v, r) > limit * s for v, r, s in _chunks(values, recreation, scale)]
    return torch.cat(parts).reshape(values.shape)


def _fit(values, recreation, scale, limit) -> _Fit:
    """The largest departure of ``values`` from ``recreation`` in units of ``scale``, and how many outputs pass
    ``limit``: compared ``_CHUNK`` outputs at a time, so a full-size output needs no full-size temporaries."""
    worst, outside = 0.0, 0
    for v, r, s in _chunks(values, recreation, scale):
        units = _difference(v, r) / s
        worst = max(worst, float(units.max()))
        outside += int((units > limit).sum())
    return _Fit(worst, outside, limit)


def _max_abs(a: torch.Tensor, b: torch.Tensor) -> float | None:
    """The largest finite |a − b| (None where no pair is finite on both sides)."""
    worst = None
    for x, y in _chunks(a, b):
        difference = _difference(x, y)
        finite = difference[torch.isfinite(difference)]
        if finite.numel():
            worst = max(worst or 0.0, float(finite.max()))
    return worst


def _tolerance(a, b, sigma_a, sigma_b, limit_a, limit_b, labels) -> dict:
    """The atol under which the two explained arithmetics pass on inputs like these: the largest |a − b| plus
    both sides' floors (each in its own σ), times ``TOLERANCE_MARGIN`` for the trials and inputs not analysed."""
    reach = 0.0
    for x, y, sa, sb in _chunks(a, b, sigma_a, sigma_b):
        reach = max(reach, float((_difference(x, y) + limit_a * sa + limit_b * sb).nan_to_num(0.0, 0.0, 0.0).max()))
    atol = TOLERANCE_MARGIN * reach
    return {
        "atol": atol,
        "rtol": 0.0,
        "basis": (
            f"{TOLERANCE_MARGIN:g} × the largest |re-creation of the reference ({labels[0]}) − re-creation of the "
            f"candidate ({labels[1]})| plus both sides' floors ({limit_a:.1f} and {limit_b:.1f} units of σ), over "
            f"all {a.numel()} outputs of the trial analysed; rtol 0 because rounding error scales with Σ|w·x|, "
            "not |y|"
        ),
    }


def _hypotheses(ops: Sequence[OpRecord]) -> list[_Hypothesis]:
    """The rewrites tried (module docstring, step 3), plain first."""
    linear = [o for o in ops if o.kind is OpKind.LINEAR]
    convolutions = [o for o in linear if o.name == "convolution"]
    scopes: list[dict] = [{}]
    if convolutions and len(convolutions) < len(linear):
        scopes.append({"convolutions_only": True})
    if len(linear) > 1:
        scopes += [{"linear_ops": (o.index,)} for o in linear[:_SINGLE_OP_HYPOTHESES]]
    precisions = [_Hypothesis(precision=p, **scope) for scope in scopes for p in _PRECISIONS]
    forms = [_Hypothesis(form=(o.index, form)) for o in ops if o.name in FORMS for form in FORMS[o.name]]
    combined = [
        _Hypothesis(precision=p, form=h.form) for h in forms for p in _PRECISIONS
    ]  # a TF32 conv and a tanh GELU on one side
    fast = [_Hypothesis(fast_math=True)] if any(o.kind is OpKind.TRANSCENDENTAL for o in ops) else []
    out = []
    for h in [_Hypothesis(), *precisions, *forms, *combined, *fast]:
        out.append(h)
        if h.precision == "tf32":  # its ties-away twin (tried last, only where needed: analyse_model)
            out.append(dataclasses.replace(h, ties="rna"))
    return out


# Terms (sampled outputs × K) up to which the twin evidence emulates the fmaf chain in numpy (``fma_emulation``)
# rather than run numba's compiled one: numba's load costs a process 0.7–0.9 s, more than the rest of a small
# explanation, while the emulation costs ~46 ns a term (2-core machine: 0.27 s for 4000 × 1440), so two chains of
# up to 2^23 terms cost about what the load does.
_EMULATED_AT_MOST = 1 << 23


def _differing(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The outputs where two same-shaped sides differ, a NaN equal to a NaN (``torch.equal`` calls two NaNs
    different, and two sides that give NaN at the same outputs are not in another order: the reference's own NaN
    fails the check)."""
    return ~((a == b) | (torch.isnan(a) & torch.isnan(b)))


def _same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal values at every output (``_differing`` nowhere), in the same shape and dtype."""
    return a.shape == b.shape and a.dtype == b.dtype and not bool(_differing(a, b).any())


def _twin_words(twins: dict[str, str], sides: dict) -> str:
    """The twin evidence as words: each side that equals a twin at the sampled outputs; where both equal the same
    one there, their differences lie outside the sample, which says nothing of an order."""
    names = set(twins.values())
    if len(twins) == 2 and len(names) == 1:
        differing = int(_differing(sides["reference"], sides["candidate"]).sum())
        return (
            f"; both sides equal {names.pop()} bit for bit at every sampled output, so their {differing} differing "
            "outputs lie outside the sample (no order is shown)"
        )
    return "".join(f"; the {side} equals {twin} bit for bit at every sampled output" for side, twin in twins.items())


def _numba_loaded() -> bool:
    return "numba" in sys.modules


def _fmaf_chain(w, x, init):
    from ..numerics.fma_emulation import fma_chain

    return fma_chain(w, x, init)


def _compiled_fmaf_chain(w, x, init):
    from ..numerics.orders import AccumulationSpec, accumulate

    return accumulate(w, x, AccumulationSpec(), init)


def twin_evidence(
    model: torch.nn.Module, ops: Sequence[OpRecord], inputs: Sequence, sides: dict, samples: int = 2000, seed: int = 0
) -> dict[str, str]:
    """Side → the CPU twin it equals bit for bit, for a Model that is one Conv2d/Conv3d module on its input.

    cuDNN's fp32 convolution is a plain fmaf chain with the input channel outermost, the bias added first or
    last (experiments/results/gpu_validation.json, shared/facts/h100_order_fastmath.json): a side equal to
    that chain at every sampled output computed exactly it, the strongest evidence of an order there is.
    """
    from ..ops.conv import gather_terms, sample_output_indices, spec_of_module

    linear = [o for o in ops if o.kind is OpKind.LINEAR]
    x = next((t for t in inputs if isinstance(t, torch.Tensor)), None)
    if len(linear) != 1 or linear[0].name != "convolution" or x is None:
        return {}
    if any(o.kind not in (OpKind.LINEAR, OpKind.EXACT) for o in ops):
        return {}
    try:
        module = model.get_submodule(linear[0].module)
        spec = spec_of_module(module)
        if (
            spec.transposed
            or spec.spatial_dims == 1
            or spec.output_shape(tuple(x.shape)) != tuple(sides["reference"].shape)
        ):
            return {}
    except Exception:  # not the one conv on the Model's input this evidence is about
        return {}
    index = sample_output_indices(tuple(sides["reference"].shape), samples, seed)
    bias = None if module.bias is None else module.bias.detach().float().cpu()
    terms = gather_terms(spec, x.detach().float().cpu(), module.weight.detach().float().cpu(), bias, index)
    # numba's chain where its load is paid already (a job forked after the fork server's warm-up, fpa fuzz) or
    # would pay off; the emulation where it would be most of the job's time
    compiled = _numba_loaded() or terms.w.size > _EMULATED_AT_MOST
    chain = _compiled_fmaf_chain if compiled else _fmaf_chain
    twins = {"the fp32 fmaf chain, input channel outermost (cuDNN's fp32 order)": chain(terms.w, terms.x, terms.bias)}
    if terms.bias is not None:  # numpy's float32 addition: the bias's one rounding to nearest even
        twins["the same chain with the bias added last"] = chain(terms.w, terms.x, None) + terms.bias
    found = {}
    for side, values in sides.items():
        at = values.detach().float().cpu().numpy()[tuple(index.T)]
        for name, twin in twins.items():
            if np.array_equal(at.view(np.uint32), twin.view(np.uint32)):
                found[side] = name
                break
    return found


_DIM_NAMES = {3: ("positions",), 4: ("rows", "columns"), 5: ("depth slices", "rows", "columns")}


def locate(bad: torch.Tensor, nonfinite: torch.Tensor, shape: tuple[int, ...]) -> dict:
    """Where the outputs in ``bad`` lie, over every output, with counts that add up: the channels and batch
    items that hold all of them (each with how many of its outputs are bad), edges, a region; ``summary`` in
    words. Dim 0 is the batch, dim 1 the channels (for outputs of 2 or more dims)."""
    bad_np = bad.cpu().numpy().reshape(shape)
    count, total = int(bad_np.sum()), int(bad_np.size)
    nonfinite_count = int(nonfinite.sum())
    parts = [
        f"{count} of {total} outputs beyond the floor"
        + (f" ({nonfinite_count} of them NaN or ±inf)" if nonfinite_count else "")
    ]
    record: dict = {"bad": count, "outputs": total, "nonfinite": nonfinite_count}
    if not count:
        record["summary"] = parts[0]
        return record
    where = np.argwhere(bad_np)
    axes = [(0, "batch item"), (1, "channel")] if len(shape) >= 2 else []
    for axis, name in sorted(axes, key=lambda a: -a[0]):
        values, counts = np.unique(where[:, axis], return_counts=True)
        per = total // shape[axis]
        if shape[axis] > 1 and len(values) <= max(1, shape[axis] // 4):
            each = [f"{name} {v}: {c} of its {per}" for v, c in zip(values.tolist(), counts.tolist(), strict=True)]
            shown = ", ".join(each[:8]) + (f", and {len(each) - 8} more" if len(each) > 8 else "")
            parts.append(
                f"all in {len(values)} {name}{'s' if len(values) > 1 else ''} of 0…{shape[axis] - 1} ({shown})"
            )
            record[f"{name.replace(' ', '_')}s"] = dict(zip(values.tolist(), counts.tolist(), strict=True))
    for d, axis in enumerate(_DIM_NAMES.get(len(shape), ())):
        extent = shape[2 + d]
        lo, hi = int(where[:, 2 + d].min()), int(where[:, 2 + d].max())
        if extent > 2 and hi == extent - 1 and lo > 0 and lo >= extent // 2:
            parts.append(f"all in the last {extent - lo} {axis} (index ≥ {lo} of 0…{extent - 1})")
        elif extent > 2 and lo == 0 and hi < extent - 1 and hi < extent // 2:
            parts.append(f"all in the first {hi + 1} {axis} (index ≤ {hi} of 0…{extent - 1})")
        elif extent > 2 and hi < extent - 1 and lo > 0:
            parts.append(f"{axis} {lo}…{hi} only, of 0…{extent - 1}")
    record["summary"] = "; ".join(parts)
    return record
