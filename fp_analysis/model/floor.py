"""The floor: how far plain fp32 rounding can move each output of a Model, measured by Monte-Carlo arithmetic.

σ is the spread of Monte-Carlo evaluations of the Model in fp64 in which every op's result carries a rounding error
of fp32 size in a random direction (``interpose.Noise``); ``fp_analysis.model.engine``'s docstring, step 2, says why
this and not first-order propagation, and how a side's departure is measured in units of σ.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import torch

from ..numerics.formats import FORMATS
from .drift import drift_of
from .graph import OpKind
from .interpose import Arithmetic, Noise, evaluate

__all__ = ["FLOOR_MULTIPLIER", "floor_of", "with_underflow"]

FLOOR_MULTIPLIER = 8.0  # fp_analysis.model.engine's docstring, step 2
# η: half the fp32 subnormal spacing, the least any fp32 result can be off by; σ is at least K·η (floor_of).
_SIGMA_MIN = math.ldexp(1.0, -150)
# Runs of the operands' flips alone after the one with every flip one way (``operand_flips``), each flip in a random
# direction. One way, a normalisation downstream takes the shift common to a row out (four TF32 Linear → LayerNorm →
# GELU layers: the flips then moved the outputs 27 × less than the candidate's flips did), and carried through the
# linear ops one run's flips cancel at some outputs by the signs of the weights, where a kernel's need not (a
# correct TF32 LeNet-5 was a bug at 1 output of 640 on 2 seeds of 12, and 3.5–8 σ out where the floor is 8 on the rest).
_FLIP_RANDOM_RUNS = 3
_U32 = FORMATS["fp32"].unit_roundoff
_FP32_TINY = math.ldexp(1.0, -126)  # fp32's smallest normal number
# the most an underflow may move an output (``with_underflow``): x·sigmoid(x) flushed to 0 where the truth is
# 2.6e-37 at most (x = −88.7, where e^−x passes fp32's 2^128), under 2^-121; a departure beyond it is not underflow's
_UNDERFLOW_REACH = math.ldexp(1.0, -120)


def floor_of(
    model: torch.nn.Module,
    inputs: Sequence,
    *,
    runs: int = 8,
    seed: int = 0,
    any_order: bool = False,
    base: Arithmetic | None = None,
    scales: dict | None = None,
    run_drifts: dict | None = None,
):
    """(evaluation, σ): the Model under ``base`` (fp64 by default) and the Monte-Carlo spread of fp32 rounding
    around it (module docstring, step 2): two runs with every error one way, then ``runs`` with random signs.
    Where ``base`` is fast-math each transcendental op carries its fast-math form's measured residual
    (``fast_math.residual_units``), and two more one-sign runs carry those residuals alone: in a run where every op
    errs one way, the other ops' errors (a norm's, at eight times their size) can cancel an approximation's through a
    decreasing function (a norm's 1/σ), and the approximation's own error is what a fast-math kernel adds.
    With ``any_order`` each sum errs as a sequential sum in any order of its terms does (``Noise.any_order``).
    ``scales`` (each linear op's Σ|w·x|) come from the fp64 evaluation unless given. ``run_drifts``, where given,
    gets each run's drift over its amplitude (``drift.drift_of``: how the run moves the whole output one way), in
    lists under "random" (the random-sign runs), "one_sign" and "approximations" (the one-sign runs of the
    fast-math residuals alone). Where ``base`` rounds linear operands, runs of their flips alone (``operand_flips``)
    follow, one with every flip one way and ``_FLIP_RANDOM_RUNS`` with each in a random direction; how far they move
    each output is the evaluation's ``flip_spread``, apart from σ: the engine's floor multiplies σ by the fp32
    Model's own error in units of the noise runs' σ, a measure of how far the noise runs fall short of fp32's
    arithmetic on this Model, which says nothing of the flips (counted at their full size already)."""
    base = base or Arithmetic()
    fast_math = base.fast_math
    rounds = base.linear_format is not None or base.kind_formats is not None
    centre = evaluate(model, inputs, base, record_scales=scales is None, record_operands=rounds, record_exact=True)
    scales = centre.scales if scales is None else scales
    deviations: dict = {}  # how far the noise runs move each recorded operand (``operand_flips``)
    device = centre.output.device
    generator = torch.Generator(device=device).manual_seed(seed)
    sigma = torch.zeros_like(centre.output)
    alone = [(+1, True), (-1, True)] if fast_math else []
    for sign, only_fast in [(+1, False), (-1, False)] + [(None, False)] * runs + alone:
        noise = Noise(generator, scales, fast_math, sign, FLOOR_MULTIPLIER, only_fast, any_order, centre.operands,
                      deviations, exact=centre.exact)  # fmt: skip
        run = evaluate(model, inputs, dataclasses.replace(base, noise=noise))
        sigma = torch.maximum(sigma, (run.output - centre.output).abs().nan_to_num(0.0, 0.0, 0.0) / FLOOR_MULTIPLIER)
        if run_drifts is not None:
            kind = "random" if sign is None else "approximations" if only_fast else "one_sign"
            run_drifts.setdefault(kind, []).append(drift_of(run.output, centre.output) / FLOOR_MULTIPLIER)
    if centre.operands and deviations:  # the flips the rounded operands may take, at their full size
        for sign in (+1,) + (None,) * _FLIP_RANDOM_RUNS:
            noise = Noise(generator, scales, sign=sign, operands=centre.operands, deviations=deviations,
                          flips_only=True)  # fmt: skip
            run = evaluate(model, inputs, dataclasses.replace(base, noise=noise))
            moved = (run.output - centre.output).abs().nan_to_num(0.0, 0.0, 0.0)
            spread = centre.flip_spread
            centre.flip_spread = moved if spread is None else torch.maximum(spread, moved)
    # No fp32 result is closer than half an ulp of itself: a clamp bound or a constant of the Model rounded to
    # fp32 moves an output that nothing upstream can move (σ = 0 there otherwise) — unless the output is itself an
    # fp32 number, which a result computed exactly (``exactness``) is and only a wrong one departs from.
    own = (_U32 * centre.output.abs()).nan_to_num(0.0, 0.0, 0.0)
    if centre.output.dtype == torch.float64:
        own = own.masked_fill(centre.output.to(torch.float32).to(torch.float64) == centre.output, 0.0)
    # Near underflow each of a K-term sum's roundings errs by up to η = 2^-150 absolute (Higham 2002, §2.1, eq.
    # (2.8)), whatever order: a kernel that folds a multiplier into the weights rounds K subnormal products
    # where the Model rounds one.
    terms = max((o.terms for o in centre.ops if o.kind is OpKind.LINEAR), default=1)
    return centre, torch.maximum(sigma, own).clamp_min(max(1, terms) * _SIGMA_MIN)


def with_underflow(sigma: torch.Tensor, fp32: torch.Tensor, truth: torch.Tensor) -> torch.Tensor:
    """σ widened, at the outputs where fp32's range and not its rounding sets the fp32 Model's error, to that error
    (up to ``_UNDERFLOW_REACH``): where the truth or the fp32 Model's value is below fp32's smallest normal number
    2^-126 in magnitude. There a result is subnormal, with an absolute error of up to 2^-150 rather than a relative
    one (Higham 2002, §2.1, eq. (2.8)), or an intermediate overflowed and flushed the output to zero: x·sigmoid(x) is
    0 in fp32 for x < −88.7, where e^−x is +inf, though the truth is a normal number up to 2^-121. The Monte-Carlo
    runs in fp64 never leave fp32's range and see neither; measured against them such an output departs by 10^6 σ and
    more, and the baseline (``engine``: the largest departure over all outputs) would take every output's floor there
    with it. What the widening admits at an output is at most the floor's multiple of 2^-120."""
    tiny = (truth.abs() < _FP32_TINY) | (fp32.abs() < _FP32_TINY)
    if not bool(tiny.any()):
        return sigma
    own = (fp32 - truth).abs().nan_to_num(0.0, 0.0, 0.0).clamp_max(_UNDERFLOW_REACH)
    return torch.where(tiny, torch.maximum(sigma, own), sigma)
